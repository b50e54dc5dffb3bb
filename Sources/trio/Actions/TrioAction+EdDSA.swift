extension TrioAction.EdDSA {
    /// Distributed key generation (EdDSA; default route `/v3/trio/eddsa/keygen`).
    public struct Keygen: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "keygen", protocol: String = "trio", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Keyshare reconciliation (EdDSA; default route `/v3/trio/eddsa/reconcile`).
    public struct Reconcile: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "reconcile", protocol: String = "trio", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key refresh (EdDSA; default route `/v3/trio/eddsa/refresh`).
    public struct KeyRefresh: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "refresh", protocol: String = "trio", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Signing (EdDSA; default route `/v3/trio/eddsa/sign`).
    public struct Signature: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "sign", protocol: String = "trio", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Pre-signature generation (WebSocket) (EdDSA; default route `/v3/trio/eddsa/presign`).
    public struct PreSignature: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "presign", protocol: String = "trio", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Pre-signature finalization (HTTP POST via `sendPostRequest`) (EdDSA; default route `/v3/trio/eddsa/presign-final`).
    public struct PreSignatureFinal: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "presign-final", protocol: String = "trio", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Keyshare recovery (EdDSA; default route `/v3/trio/eddsa/recover`).
    public struct Recovery: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "recover", protocol: String = "trio", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key export (EdDSA; default route `/v3/trio/eddsa/export`).
    public struct Export: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "export", protocol: String = "trio", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key import (EdDSA; default route `/v3/trio/eddsa/import`).
    public struct Import: TrioNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "trio", action: String = "import", protocol: String = "trio", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }
}
