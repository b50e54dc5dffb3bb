// Duo presignatures (protocol v2, issue 20): preSign over the WebSocket (`/v3/{algorithm}/presign`),
// preSignFinal over HTTP POST (`DuoNetworkClient.sendPostRequest`: `/v3/{path}/presign-final`, EdDSA
// `/v3/{path}/eddsa/presign-final`, path `duo`).

extension DuoAction.ECDSA {
    /// Presigning (ECDSA; default route `/v3/ecdsa/presign`).
    public struct PreSignature: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "presign", protocol: String = "duo-instance", algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Finishing a presignature (ECDSA; HTTP POST, default route `/v3/duo/presign-final`).
    public struct PreSignatureFinal: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "presign-final", protocol: String = "duo-instance",
                    algorithm: String = "ecdsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }
}

extension DuoAction.EdDSA {
    /// Presigning: FROST round 1 ahead of the message (EdDSA; default route `/v3/eddsa/presign`).
    public struct PreSignature: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "presign", protocol: String = "duo-instance", algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }

    /// Finishing a presignature (EdDSA; HTTP POST, default route `/v3/duo/eddsa/presign-final`).
    public struct PreSignatureFinal: DuoNetworkAction, Equatable {
        public var path: String
        public var action: String
        public var `protocol`: String
        public var algorithm: String

        /// Every field defaults to the stock routing; override any of them.
        public init(path: String = "duo", action: String = "presign-final", protocol: String = "duo-instance",
                    algorithm: String = "eddsa") {
            self.path = path
            self.action = action
            self.protocol = `protocol`
            self.algorithm = algorithm
        }
    }
}
