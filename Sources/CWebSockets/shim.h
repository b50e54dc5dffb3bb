// libwebsockets for the cloud node's server (Sources/CloudNode/Server). Swift cannot import
// function-like or cast macros, so the ones the server needs are re-exported as static inline
// functions here. Everything except lws_cancel_service() must be called on the service thread.
#ifndef SILENTSHARD_CWEBSOCKETS_SHIM_H
#define SILENTSHARD_CWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>

/// Headroom lws_write needs in front of the payload.
static inline size_t ss_lws_pre(void) { return LWS_PRE; }

/// Context options: global TLS init when `tls`, no IPv6 when `ipv4_only` (else lws ignores iface).
static inline uint64_t ss_lws_server_options(int tls, int ipv4_only) {
    uint64_t options = LWS_SERVER_OPTION_VALIDATE_UTF8;
    if (tls) options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    if (ipv4_only) options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    return options;
}

/// Write flags for one fragment of a message.
static inline int ss_lws_fragment_flags(int binary, int first, int last) {
    int flags = first ? (binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT) : LWS_WRITE_CONTINUATION;
    if (!last) flags |= LWS_WRITE_NO_FIN;
    return flags;
}

/// Whether the HTTP request is a POST (lws records the method by which URI token is set).
static inline int ss_lws_is_post(struct lws *wsi) {
    return lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
}

/// Whether the HTTP request is a GET.
static inline int ss_lws_is_get(struct lws *wsi) {
    return lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
}

/// Copies the request URI (path only) into `buffer`; returns its length or -1.
static inline int ss_lws_copy_uri(struct lws *wsi, char *buffer, int length) {
    if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0)
        return lws_hdr_copy(wsi, buffer, length, WSI_TOKEN_GET_URI);
    if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0)
        return lws_hdr_copy(wsi, buffer, length, WSI_TOKEN_POST_URI);
    return -1;
}

/// Copies the raw (still percent-encoded) query string; returns its length, 0 when absent.
static inline int ss_lws_copy_query(struct lws *wsi, char *buffer, int length) {
    int total = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS);
    if (total <= 0) return 0;
    if (total >= length) return -1;
    /* lws splits fragments on '&'; fragment 0 is enough for "params=<value>" (the client encodes '&'). */
    return lws_hdr_copy_fragment(wsi, buffer, length, WSI_TOKEN_HTTP_URI_ARGS, 0);
}

/// Copies a header (e.g. WSI_TOKEN_PROTOCOL, WSI_TOKEN_HTTP_AUTHORIZATION); returns length or -1/0.
static inline int ss_lws_copy_header(struct lws *wsi, enum lws_token_indexes token, char *buffer, int length) {
    int total = lws_hdr_total_length(wsi, token);
    if (total <= 0) return 0;
    if (total >= length) return -1;
    return lws_hdr_copy(wsi, buffer, length, token);
}

/// Writes a complete HTTP response head (status, content type, length, and `Retry-After` when
/// `retry_after` >= 0) into the buffer and sends it. Returns 0 on success.
static inline int ss_lws_write_http_head(struct lws *wsi, unsigned int status, const char *content_type,
                                         unsigned long content_length, long long retry_after,
                                         unsigned char *buffer, size_t size) {
    unsigned char *start = buffer + LWS_PRE, *p = start, *end = buffer + size - 1;
    if (lws_add_http_common_headers(wsi, status, content_type, content_length, &p, end)) return 1;
    if (retry_after >= 0) {
        char value[24];
        int length = snprintf(value, sizeof value, "%lld", retry_after);
        if (length <= 0 || length >= (int)sizeof value) return 1;
        if (lws_add_http_header_by_name(wsi, (const unsigned char *)"retry-after:", (const unsigned char *)value,
                                        length, &p, end)) return 1;
    }
    if (lws_finalize_write_http_header(wsi, start, &p, end)) return 1;
    return 0;
}

#endif
