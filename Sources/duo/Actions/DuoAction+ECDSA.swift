extension DuoAction.ECDSA {
    /// Distributed key generation (ECDSA; default route `/v3/ecdsa/keygen`).
    public struct Keygen: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "keygen", protocol: String = "duo-instance", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Keyshare reconciliation (ECDSA; default route `/v3/ecdsa/reconcile`).
    public struct Reconcile: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "reconcile", protocol: String = "duo-instance", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key refresh (ECDSA; default route `/v3/ecdsa/refresh`).
    public struct KeyRefresh: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "refresh", protocol: String = "duo-instance", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Signing (ECDSA; default route `/v3/ecdsa/sign`).
    public struct Signature: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "sign", protocol: String = "duo-instance", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key import (ECDSA; default route `/v3/ecdsa/import`).
    public struct Import: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "import", protocol: String = "duo-instance", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }
}
