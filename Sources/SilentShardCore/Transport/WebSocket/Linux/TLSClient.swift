#if !canImport(Darwin)
internal import COpenSSL
import Foundation
import Glibc

/// One TLS client session over a connected socket (OpenSSL): verifies the chain against the system
/// store or the configured roots, verifies the host name (or IP address), sends SNI for names.
/// Owned by one thread.
final class TLSClient {
    private let context: OpaquePointer
    let ssl: OpaquePointer

    init(fd: Int32, host: String, trustedRoots: [Data]) throws(NetworkError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw Self.failure("SSL_CTX_new") }
        _ = silentshard_ssl_ctx_set_min_tls12(context)
        _ = silentshard_ssl_ctx_set_transport_modes(context)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if trustedRoots.isEmpty {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                SSL_CTX_free(context)
                throw Self.failure("loading the system trust store")
            }
        } else {
            let store = SSL_CTX_get_cert_store(context)
            for der in trustedRoots {
                let added: Bool = der.withUnsafeBytes { raw in
                    guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return false }
                    var cursor: UnsafePointer<UInt8>? = base
                    guard let certificate = d2i_X509(nil, &cursor, raw.count) else { return false }
                    defer { X509_free(certificate) }
                    return X509_STORE_add_cert(store, certificate) == 1
                }
                guard added else {
                    SSL_CTX_free(context)
                    throw Self.failure("a trusted root certificate is not valid DER")
                }
            }
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw Self.failure("SSL_new")
        }
        self.context = context
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        var address = in6_addr()
        let isIPAddress = inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
        if isIPAddress {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else { throw Self.failure("IP check") }
        } else {
            guard silentshard_ssl_set_sni(ssl, host) == 1, SSL_set1_host(ssl, host) == 1 else {
                throw Self.failure("host name check")
            }
        }
        SSL_set_connect_state(ssl)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// The error for a failed handshake step, naming a certificate problem when there is one.
    func handshakeFailure() -> NetworkError {
        let verify = SSL_get_verify_result(ssl)
        if verify != X509_V_OK {
            return .tlsFailure(reason: "certificate verification failed: " + String(cString: X509_verify_cert_error_string(verify)))
        }
        return Self.failure("handshake")
    }

    static func failure(_ step: String) -> NetworkError {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return .tlsFailure(reason: step) }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return .tlsFailure(reason: "\(step): \(text)")
    }
}
#endif
