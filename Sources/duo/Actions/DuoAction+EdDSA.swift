extension DuoAction.EdDSA {
    /// Distributed key generation (EdDSA; default route `/v3/eddsa/keygen`).
    public struct Keygen: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "keygen", protocol: String = "duo-instance", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Keyshare reconciliation (EdDSA; default route `/v3/eddsa/reconcile`).
    public struct Reconcile: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "reconcile", protocol: String = "duo-instance", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key refresh (EdDSA; default route `/v3/eddsa/refresh`).
    public struct KeyRefresh: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "refresh", protocol: String = "duo-instance", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Signing (EdDSA; default route `/v3/eddsa/sign`).
    public struct Signature: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "sign", protocol: String = "duo-instance", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Key import (EdDSA; default route `/v3/eddsa/import`).
    public struct Import: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "import", protocol: String = "duo-instance", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }
}
