import Foundation
import SilentShardCore

/// An Ethereum transaction to sign: legacy with EIP-155 replay protection
/// (<https://eips.ethereum.org/EIPS/eip-155>), EIP-2930 access-list transactions (type 1,
/// <https://eips.ethereum.org/EIPS/eip-2930>) and EIP-1559 fee-market transactions (type 2,
/// <https://eips.ethereum.org/EIPS/eip-1559>), as EIP-2718 typed envelopes.
public struct EthereumTransaction: Sendable, Equatable {
    /// The envelope type.
    public enum TransactionType: UInt8, Sendable {
        /// Legacy, signed with EIP-155 (v = 2·chainId + 35 + yParity).
        case legacy = 0
        /// EIP-2930: `0x01 ‖ rlp([chainId, nonce, gasPrice, gasLimit, to, value, data, accessList, …])`.
        case accessList = 1
        /// EIP-1559: `0x02 ‖ rlp([chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value,
        /// data, accessList, …])`.
        case dynamicFee = 2
    }

    /// One EIP-2930 access-list entry: an address and the 32-byte storage keys it touches.
    public struct AccessListEntry: Sendable, Equatable {
        public var address: EthereumAddress
        public var storageKeys: [Data]

        public init(address: EthereumAddress, storageKeys: [Data]) {
            self.address = address
            self.storageKeys = storageKeys
        }
    }

    /// The largest chain id of a legacy transaction: EIP-2294's bound, `UInt64.max / 2 − 36`
    /// (<https://eips.ethereum.org/EIPS/eip-2294>), below which EIP-155's `v = chainId · 2 + 35 + yParity`
    /// fits 64 bits. Typed envelopes (types 1 and 2) carry the chain id as it is: any `UInt64`.
    public static let maximumLegacyChainId: UInt64 = UInt64.max / 2 - 36

    /// The envelope type (set when made: a legacy transaction's chain id is checked against it).
    public private(set) var type: TransactionType
    /// The chain id (set when made; at most `maximumLegacyChainId` for a legacy transaction).
    public private(set) var chainId: UInt64
    public var nonce: UInt64
    /// Legacy and type 1.
    public var gasPrice: EthereumQuantity
    /// Type 2.
    public var maxPriorityFeePerGas: EthereumQuantity
    /// Type 2.
    public var maxFeePerGas: EthereumQuantity
    public var gasLimit: UInt64
    /// The recipient; nil creates a contract.
    public var to: EthereumAddress?
    public var value: EthereumQuantity
    public var data: Data
    /// Types 1 and 2.
    public var accessList: [AccessListEntry]

    /// A transaction of `type` (the fields a type does not use are ignored). `chainIdOutOfRange` for a legacy
    /// transaction whose chain id is above `maximumLegacyChainId` (its EIP-155 `v` would not fit 64 bits).
    public init(type: TransactionType, chainId: UInt64, nonce: UInt64, gasPrice: EthereumQuantity = 0,
                maxPriorityFeePerGas: EthereumQuantity = 0, maxFeePerGas: EthereumQuantity = 0, gasLimit: UInt64,
                to: EthereumAddress?, value: EthereumQuantity, data: Data = Data(), accessList: [AccessListEntry] = []) throws(ChainError) {
        guard type != .legacy || chainId <= Self.maximumLegacyChainId else {
            throw .chainIdOutOfRange(chainId: chainId, maximum: Self.maximumLegacyChainId)
        }
        self.type = type
        self.chainId = chainId
        self.nonce = nonce
        self.gasPrice = gasPrice
        self.maxPriorityFeePerGas = maxPriorityFeePerGas
        self.maxFeePerGas = maxFeePerGas
        self.gasLimit = gasLimit
        self.to = to
        self.value = value
        self.data = data
        self.accessList = accessList
    }

    /// The fields every type signs, in its order (without the signature).
    private var fields: [RLP.Item] {
        let to: RLP.Item = .bytes(self.to?.bytes ?? Data())
        let access: RLP.Item = .list(accessList.map { .list([.bytes($0.address.bytes), .list($0.storageKeys.map { .bytes($0) })]) })
        switch type {
        case .legacy:
            return [.uint(nonce), gasPrice.rlp, .uint(gasLimit), to, value.rlp, .bytes(data)]
        case .accessList:
            return [.uint(chainId), .uint(nonce), gasPrice.rlp, .uint(gasLimit), to, value.rlp, .bytes(data), access]
        case .dynamicFee:
            return [.uint(chainId), .uint(nonce), maxPriorityFeePerGas.rlp, maxFeePerGas.rlp, .uint(gasLimit), to, value.rlp,
                    .bytes(data), access]
        }
    }

    private func envelope(_ items: [RLP.Item]) -> Data {
        let body = RLP.encode(.list(items))
        return type == .legacy ? body : Data([type.rawValue]) + body
    }

    /// The 32-byte hash the sender signs (legacy: with EIP-155's `chainId, 0, 0`).
    public var signingHash: Data {
        type == .legacy ? Keccak256.hash(envelope(fields + [.uint(chainId), .uint(0), .uint(0)]))
                        : Keccak256.hash(envelope(fields))
    }

    /// The raw signed transaction (what `eth_sendRawTransaction` takes). A legacy `v = chainId · 2 + 35 +
    /// yParity` cannot overflow: the chain id was checked when the transaction was made.
    public func raw(signature: EthereumSignature) -> Data {
        let r = RLP.Item.bytes(Data(signature.r.drop { $0 == 0 })), s = RLP.Item.bytes(Data(signature.s.drop { $0 == 0 }))
        let v: RLP.Item = type == .legacy ? .uint(chainId * 2 + 35 + UInt64(signature.yParity)) : .uint(UInt64(signature.yParity))
        return envelope(fields + [v, r, s])
    }

    /// Signs through `sign` (the SDK's signature over a 32-byte hash) and checks the signature recovers to
    /// `publicKey`'s address (`signatureMismatch` otherwise). Returns the signed transaction.
    public func sign(publicKey: Data, with sign: (Data) async throws -> Signature) async throws -> SignedEthereumTransaction {
        let sender = try EthereumAddress(publicKey: publicKey)
        let signature = try EthereumSignature(try await sign(signingHash))
        guard try signature.recoverAddress(hash: signingHash) == sender else { throw ChainError.signatureMismatch }
        return SignedEthereumTransaction(transaction: self, signature: signature)
    }
}

/// A signed transaction: its raw bytes, hash and sender.
public struct SignedEthereumTransaction: Sendable, Equatable {
    public let transaction: EthereumTransaction
    public let signature: EthereumSignature

    public init(transaction: EthereumTransaction, signature: EthereumSignature) {
        self.transaction = transaction
        self.signature = signature
    }

    /// The raw signed transaction.
    public var raw: Data { transaction.raw(signature: signature) }
    /// The transaction hash: Keccak-256 of the raw bytes.
    public var hash: Data { Keccak256.hash(raw) }

    /// The address that signed it.
    public func sender() throws(ChainError) -> EthereumAddress {
        try signature.recoverAddress(hash: transaction.signingHash)
    }

    /// Parses a raw signed transaction (legacy with EIP-155, type 1 or type 2), strictly: canonical RLP
    /// and integers, 20-byte addresses, 32-byte storage keys, low S; anything else is a `ChainError` (a legacy
    /// `v` whose chain id is above `EthereumTransaction.maximumLegacyChainId`: `chainIdOutOfRange`).
    public init(raw: Data) throws(ChainError) {
        let bytes = [UInt8](raw)
        guard let first = bytes.first else { throw .invalidEncoding(reason: "empty transaction") }
        let type: EthereumTransaction.TransactionType
        let body: Data
        if first >= 0xC0 {
            type = .legacy
            body = raw
        } else if first == 1 || first == 2, let typed = EthereumTransaction.TransactionType(rawValue: first) {
            type = typed
            body = Data(bytes.dropFirst())
        } else {
            throw .invalidEncoding(reason: "unsupported transaction type")
        }
        let items = try RLP.decode(body).items("transaction")
        func address(_ item: RLP.Item, _ field: String) throws(ChainError) -> EthereumAddress? {
            let value = try item.byteString(field)
            if value.isEmpty { return nil }
            guard value.count == 20 else { throw .invalidEncoding(reason: "\(field): not 20 bytes") }
            return EthereumAddress(uncheckedBytes: value)
        }
        func accessList(_ item: RLP.Item) throws(ChainError) -> [EthereumTransaction.AccessListEntry] {
            var entries: [EthereumTransaction.AccessListEntry] = []
            for entry in try item.items("accessList") {
                let pair = try entry.items("accessList entry")
                guard pair.count == 2, let entryAddress = try address(pair[0], "accessList address") else {
                    throw .invalidEncoding(reason: "accessList entry")
                }
                var keys: [Data] = []
                for key in try pair[1].items("storageKeys") {
                    let bytes = try key.byteString("storageKey")
                    guard bytes.count == 32 else { throw .invalidEncoding(reason: "storageKey: not 32 bytes") }
                    keys.append(bytes)
                }
                entries.append(.init(address: entryAddress, storageKeys: keys))
            }
            return entries
        }
        func word(_ item: RLP.Item, _ field: String) throws(ChainError) -> Data {
            let value = try EthereumQuantity(rlp: item, field: field).bigEndian
            return Data(repeating: 0, count: 32 - value.count) + value
        }
        switch type {
        case .legacy:
            guard items.count == 9 else { throw .invalidEncoding(reason: "legacy transaction: not 9 fields") }
            let v = try UInt64(rlp: items[6], field: "v")
            guard v >= 37 else { throw .invalidEncoding(reason: "legacy transaction without EIP-155 replay protection") }
            let chainId = (v - 35) / 2
            transaction = try EthereumTransaction(type: .legacy, chainId: chainId, nonce: try UInt64(rlp: items[0], field: "nonce"),
                                              gasPrice: try EthereumQuantity(rlp: items[1], field: "gasPrice"),
                                              gasLimit: try UInt64(rlp: items[2], field: "gasLimit"), to: try address(items[3], "to"),
                                              value: try EthereumQuantity(rlp: items[4], field: "value"),
                                              data: try items[5].byteString("data"))
            signature = try EthereumSignature(r: try word(items[7], "r"), s: try word(items[8], "s"), yParity: UInt8((v - 35) % 2))
        case .accessList:
            guard items.count == 11 else { throw .invalidEncoding(reason: "type 1 transaction: not 11 fields") }
            transaction = try EthereumTransaction(type: .accessList, chainId: try UInt64(rlp: items[0], field: "chainId"),
                                              nonce: try UInt64(rlp: items[1], field: "nonce"),
                                              gasPrice: try EthereumQuantity(rlp: items[2], field: "gasPrice"),
                                              gasLimit: try UInt64(rlp: items[3], field: "gasLimit"), to: try address(items[4], "to"),
                                              value: try EthereumQuantity(rlp: items[5], field: "value"),
                                              data: try items[6].byteString("data"), accessList: try accessList(items[7]))
            signature = try EthereumSignature(r: try word(items[9], "r"), s: try word(items[10], "s"),
                                              yParity: try Self.parity(items[8]))
        case .dynamicFee:
            guard items.count == 12 else { throw .invalidEncoding(reason: "type 2 transaction: not 12 fields") }
            transaction = try EthereumTransaction(type: .dynamicFee, chainId: try UInt64(rlp: items[0], field: "chainId"),
                                              nonce: try UInt64(rlp: items[1], field: "nonce"),
                                              maxPriorityFeePerGas: try EthereumQuantity(rlp: items[2], field: "maxPriorityFeePerGas"),
                                              maxFeePerGas: try EthereumQuantity(rlp: items[3], field: "maxFeePerGas"),
                                              gasLimit: try UInt64(rlp: items[4], field: "gasLimit"), to: try address(items[5], "to"),
                                              value: try EthereumQuantity(rlp: items[6], field: "value"),
                                              data: try items[7].byteString("data"), accessList: try accessList(items[8]))
            signature = try EthereumSignature(r: try word(items[10], "r"), s: try word(items[11], "s"),
                                              yParity: try Self.parity(items[9]))
        }
        guard self.raw == raw else { throw .invalidEncoding(reason: "transaction: not in canonical form") }
    }

    private static func parity(_ item: RLP.Item) throws(ChainError) -> UInt8 {
        let bytes = try item.byteString("yParity")
        switch bytes.count {
        case 0: return 0
        case 1 where bytes[bytes.startIndex] == 1: return 1
        default: throw .invalidEncoding(reason: "yParity must be 0 or 1")
        }
    }
}
