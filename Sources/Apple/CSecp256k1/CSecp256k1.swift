// Apple branch of the manifest only (docs/apple.md): the module CSecp256k1 is this re-export of
// swift-secp256k1's `libsecp256k1` C module (upstream names, no prefixes) plus the three flag helpers
// that Sources/CSecp256k1/shim.h gives the Linux branch, so MPCCrypto's `internal import CSecp256k1`
// is the same on both branches.
@_exported import libsecp256k1

/// `SECP256K1_CONTEXT_NONE`, as the Linux shim's helper of the same name returns it.
@inlinable public func silentshard_secp256k1_context_none() -> UInt32 { UInt32(SECP256K1_CONTEXT_NONE) }
/// `SECP256K1_EC_COMPRESSED`, as the Linux shim's helper of the same name returns it.
@inlinable public func silentshard_secp256k1_ec_compressed() -> UInt32 { UInt32(SECP256K1_EC_COMPRESSED) }
/// `SECP256K1_EC_UNCOMPRESSED`, as the Linux shim's helper of the same name returns it.
@inlinable public func silentshard_secp256k1_ec_uncompressed() -> UInt32 { UInt32(SECP256K1_EC_UNCOMPRESSED) }
