// Apple branch of the manifest only (docs/apple.md): the module CSodium is this re-export of
// swift-sodium's `Clibsodium` module (libsodium's own headers and names), so MPCCrypto's
// `internal import CSodium` is the same on both branches.
@_exported import Clibsodium
