#if !canImport(CryptoKit)
internal import COpenSSL

/// P-256 ECDSA on Linux: OpenSSL 3 `EVP_PKEY`s (the nonce k from OpenSSL's DRBG); OpenSSL's DER signatures
/// converted to and from r ‖ s by `ECDSADER`.
enum OpenSSLP256: P256BackendInterface {
    static func privateKey(rawRepresentation: [UInt8]) throws(CryptoError) -> (key: EVPKey, x963: [UInt8]) {
        let publicBytes = try P256Group.publicKey(forPrivateKey: rawRepresentation)
        return (try EVPKey.p256(privateKey: rawRepresentation, publicKey: publicBytes), publicBytes)
    }

    static func publicKey(sec1: [UInt8]) throws(CryptoError) -> (key: EVPKey, x963: [UInt8]) {
        let uncompressed = try P256Group.uncompressed(sec1)
        return (try EVPKey.p256(publicKey: uncompressed), uncompressed)
    }

    static func sign(_ message: [UInt8], with key: EVPKey) throws(CryptoError) -> [UInt8] {
        let (r, s) = try ECDSADER.decode(try key.sign(message))
        return r + s
    }

    static func isValidSignature(_ rawSignature: [UInt8], for message: [UInt8], under key: EVPKey) -> Bool {
        guard rawSignature.count == 64,
              let der = try? ECDSADER.encode(r: Array(rawSignature[0..<32]), s: Array(rawSignature[32..<64]))
        else { return false }
        return key.verify(der, message: message)
    }
}

/// An owned `EVP_PKEY` for P-256 (immutable after creation, so shared between threads).
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// Imports a key pair (both halves, as OpenSSL 3 does not derive the public key on import).
    static func p256(privateKey: [UInt8], publicKey: [UInt8]) throws(CryptoError) -> EVPKey {
        guard let privateNumber = BN_bin2bn(privateKey, Int32(privateKey.count), nil) else {
            throw .libraryFailure("BN_bin2bn")
        }
        defer { BN_clear_free(privateNumber) }
        return try fromData(publicKey: publicKey, selection: silentshard_evp_pkey_keypair()) { builder in
            OSSL_PARAM_BLD_push_BN(builder, ParameterNames.privateKey, privateNumber) == 1
        }
    }

    /// Imports a public key (OpenSSL checks that the point is on the curve).
    static func p256(publicKey: [UInt8]) throws(CryptoError) -> EVPKey {
        try fromData(publicKey: publicKey, selection: silentshard_evp_pkey_public_key()) { _ in true }
    }

    /// Builds the key from OSSL_PARAMs. The builder keeps pointers to names and buffers until
    /// `OSSL_PARAM_BLD_to_param` (and the params keep the names), so names are process-lifetime
    /// C strings and buffers stay alive across the whole call.
    private static func fromData(publicKey: [UInt8], selection: Int32,
                                 pushPrivate: (OpaquePointer) -> Bool) throws(CryptoError) -> EVPKey {
        guard let builder = OSSL_PARAM_BLD_new() else { throw .libraryFailure("OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        let params: UnsafeMutablePointer<OSSL_PARAM>? = publicKey.withUnsafeBytes { publicBytes in
            guard OSSL_PARAM_BLD_push_utf8_string(builder, ParameterNames.group, ParameterNames.p256, 0) == 1,
                  OSSL_PARAM_BLD_push_octet_string(builder, ParameterNames.publicKey, publicBytes.baseAddress,
                                                   publicBytes.count) == 1,
                  pushPrivate(builder)
            else { return nil }
            return OSSL_PARAM_BLD_to_param(builder)
        }
        guard let params else { throw .invalidKey }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw .libraryFailure("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &key, selection, params) == 1,
              let key
        else {
            ERR_clear_error()
            throw .invalidKey
        }
        return EVPKey(pointer: key)
    }

    /// DER signature of SHA-256(message).
    func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw .libraryFailure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit_ex(context, nil, "SHA256", nil, nil, pointer, nil) == 1 else {
            throw .libraryFailure("EVP_DigestSignInit_ex")
        }
        var signature = [UInt8](repeating: 0, count: 80)
        var length = signature.count
        let input = message.isEmpty ? [0] : message
        guard EVP_DigestSign(context, &signature, &length, input, message.count) == 1 else {
            throw .libraryFailure("EVP_DigestSign")
        }
        return Array(signature.prefix(length))
    }

    /// Verifies a DER signature of SHA-256(message).
    func verify(_ der: [UInt8], message: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit_ex(context, nil, "SHA256", nil, nil, pointer, nil) == 1 else { return false }
        let input = message.isEmpty ? [0] : message
        let result = EVP_DigestVerify(context, der, der.count, input, message.count)
        ERR_clear_error()
        return result == 1
    }
}

/// OSSL_PARAM names and values as C strings that live as long as the process.
private enum ParameterNames {
    nonisolated(unsafe) static let group: UnsafePointer<CChar> = permanent("group")
    nonisolated(unsafe) static let p256: UnsafePointer<CChar> = permanent("P-256")
    nonisolated(unsafe) static let privateKey: UnsafePointer<CChar> = permanent("priv")
    nonisolated(unsafe) static let publicKey: UnsafePointer<CChar> = permanent("pub")

    private static func permanent(_ text: String) -> UnsafePointer<CChar> {
        let bytes = Array(text.utf8CString)
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
        pointer.initialize(from: bytes, count: bytes.count)
        return UnsafePointer(pointer)
    }
}

/// P-256 group operations needed around key import (OpenSSL's EC_GROUP/EC_POINT API).
enum P256Group {
    /// d·G, uncompressed, for d in [1, n).
    static func publicKey(forPrivateKey privateKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
            throw .libraryFailure("EC_GROUP_new_by_curve_name")
        }
        defer { EC_GROUP_free(group) }
        guard let scalar = BN_bin2bn(privateKey, Int32(privateKey.count), nil) else { throw .libraryFailure("BN_bin2bn") }
        defer { BN_clear_free(scalar) }
        guard BN_is_zero(scalar) == 0, let order = EC_GROUP_get0_order(group), BN_cmp(scalar, order) < 0 else {
            throw .invalidKey
        }
        BN_set_flags(scalar, BN_FLG_CONSTTIME)
        guard let point = EC_POINT_new(group) else { throw .libraryFailure("EC_POINT_new") }
        defer { EC_POINT_free(point) }
        guard EC_POINT_mul(group, point, scalar, nil, nil, nil) == 1 else { throw .libraryFailure("EC_POINT_mul") }
        return try encode(point, group: group)
    }

    /// Decodes a SEC1 point (checked on the curve, not infinity) and re-encodes it uncompressed.
    static func uncompressed(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
            throw .libraryFailure("EC_GROUP_new_by_curve_name")
        }
        defer { EC_GROUP_free(group) }
        guard let point = EC_POINT_new(group) else { throw .libraryFailure("EC_POINT_new") }
        defer { EC_POINT_free(point) }
        guard EC_POINT_oct2point(group, point, bytes, bytes.count, nil) == 1,
              EC_POINT_is_at_infinity(group, point) == 0,
              EC_POINT_is_on_curve(group, point, nil) == 1
        else {
            ERR_clear_error()
            throw .invalidKey
        }
        return try encode(point, group: group)
    }

    private static func encode(_ point: OpaquePointer, group: OpaquePointer) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 65)
        guard EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &out, 65, nil) == 65 else {
            throw .libraryFailure("EC_POINT_point2oct")
        }
        return out
    }
}
#endif
