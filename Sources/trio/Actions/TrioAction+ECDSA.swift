extension TrioAction.ECDSA {
    /// Distributed key generation (ECDSA; default route `/v3/trio/keygen`).
    public struct Keygen: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "keygen", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Keyshare reconciliation (ECDSA; default route `/v3/trio/reconcile`).
    public struct Reconcile: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "reconcile", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key refresh (ECDSA; default route `/v3/trio/refresh`).
    public struct KeyRefresh: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "refresh", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Signing (ECDSA; default route `/v3/trio/sign`).
    public struct Signature: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "sign", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Pre-signature generation (WebSocket) (ECDSA; default route `/v3/trio/presign`).
    public struct PreSignature: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "presign", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Pre-signature finalization (HTTP POST via `sendPostRequest`) (ECDSA; default route `/v3/trio/presign-final`).
    public struct PreSignatureFinal: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "presign-final", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Hardened child-key derivation, ECDSA only (ECDSA; default route `/v3/trio/hard-derivation`).
    public struct HardDerivation: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "hard-derivation", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Keyshare recovery (ECDSA; default route `/v3/trio/recover`).
    public struct Recovery: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "recover", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key export (ECDSA; default route `/v3/trio/export`).
    public struct Export: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "export", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key import (ECDSA; default route `/v3/trio/import`).
    public struct Import: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "import", protocol: String = "trio", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }
}
