// swift-tools-version:6.0
//
// SilentShard for Swift: threshold-signature (MPC) wallets, ECDSA/secp256k1 (DKLs23) and
// EdDSA/Ed25519 (FROST). On Linux only the toolchain and C libraries from the system are used; the
// C libraries come in as system-library targets, each behind a thin module map. On Apple platforms
// libsecp256k1 and libsodium come from two pinned SwiftPM packages instead (docs/apple.md), behind
// the same module names (CSecp256k1, CSodium), so no Swift source changes between the two.
import PackageDescription

/// Whether this build compiles MPCCrypto's CommonCrypto backend against the Linux shim (see the end of the file).
let commonCryptoShim = Context.environment["SILENTSHARD_COMMONCRYPTO_SHIM"] == "1"

/// OpenSSL is a Linux-only dependency of the modules an app links: on Apple platforms MPCCrypto uses
/// CommonCrypto/CryptoKit (Sources/MPCCrypto/Backend) and SilentShardCore the URLSession engine
/// (scripts/check-openssl-imports keeps it that way).
let linuxOpenSSL: Target.Dependency = .target(name: "COpenSSL", condition: .when(platforms: [.linux]))

/// The manifest's branch. Apple hosts (where iOS and macOS apps are built) take the Apple branch,
/// every other host the Linux one; `SILENTSHARD_MANIFEST_PLATFORM=apple` or `=linux` overrides that,
/// so CI on Linux can evaluate the Apple branch with `swift package dump-package`, which does not
/// resolve or fetch dependencies (scripts/check-apple-manifest). Nothing of the Apple branch is ever
/// fetched by a Linux build.
let appleBranch: Bool = {
    switch Context.environment["SILENTSHARD_MANIFEST_PLATFORM"] {
    case "apple": return true
    case "linux": return false
    default:
        #if os(macOS)
        return true
        #else
        return false
        #endif
    }
}()

/// libsecp256k1 and libsodium for Apple platforms, pinned to exact tags (docs/apple.md gives the
/// revisions to check Package.resolved against). `SILENTSHARD_APPLE_PACKAGES=DIR` takes local clones
/// `DIR/swift-secp256k1` and `DIR/swift-sodium` instead (offline checks of the Apple branch).
let applePackages: [Package.Dependency] = {
    if let directory = Context.environment["SILENTSHARD_APPLE_PACKAGES"], !directory.isEmpty {
        return [.package(path: directory + "/swift-secp256k1"), .package(path: directory + "/swift-sodium")]
    }
    return [
        // MIT; libsecp256k1 v0.7.1 compiled from source (extrakeys always; ecdh, recovery, schnorrsig,
        // musig by the package's default traits).
        .package(url: "https://github.com/21-DOT-DEV/swift-secp256k1", exact: "0.23.2"),
        // ISC; libsodium 1.0.22 as a prebuilt static xcframework from libsodium's author.
        .package(url: "https://github.com/jedisct1/swift-sodium", exact: "0.11.0"),
    ]
}()

/// The C libraries of the primitives: on Linux system libraries (pkg-config; scripts/setup installs
/// them); on Apple platforms Swift modules of the same names that re-export the packages' modules
/// (Sources/Apple/).
let cryptoLibraries: [Target] = appleBranch
    ? [
        .target(
            name: "CSecp256k1", dependencies: [.product(name: "libsecp256k1", package: "swift-secp256k1")],
            path: "Sources/Apple/CSecp256k1"
        ),
        .target(
            name: "CSodium", dependencies: [.product(name: "Clibsodium", package: "swift-sodium")],
            path: "Sources/Apple/CSodium"
        ),
    ]
    : [
        .systemLibrary(
            name: "CSecp256k1",
            pkgConfig: "libsecp256k1",
            providers: [.apt(["libsecp256k1-dev"]), .brew(["secp256k1"])]
        ),
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
    ]

let package = Package(
    name: "SilentShard",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "duo", targets: ["duo"]),
        .library(name: "trio", targets: ["trio"]),
        // Optional chain helpers (Ethereum, Bitcoin, Solana) over the SDK's public API.
        .library(name: "chains", targets: ["SilentShardChains"]),
        .library(name: "MPCCrypto", targets: ["MPCCrypto"]),
        .library(name: "MPCProtocols", targets: ["MPCProtocols"]),
        .executable(name: "silentshard", targets: ["silentshard"]),
        .executable(name: "silentshard-bench", targets: ["silentshard-bench"]),
        // The seeds' three ways to provide a duo transport, runnable (Examples/, see README).
        .executable(name: "example-default-websocket", targets: ["example-default-websocket"]),
        .executable(name: "example-subclassed-client", targets: ["example-subclassed-client"]),
        .executable(name: "example-custom-transport", targets: ["example-custom-transport"]),
    ],
    dependencies: appleBranch ? applePackages : [],
    targets: cryptoLibraries + [
        // MARK: C libraries (system packages; see scripts/setup). OpenSSL is declared on both branches but the
        // app-side modules depend on it on Linux only (`linuxOpenSSL`): on Apple MPCCrypto's CommonCrypto/CryptoKit
        // backends and the URLSession engine take its place (docs/apple.md); the node and CLI are Linux tools.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),

        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),

        // libpq: the cloud node's PostgreSQL share store (node clusters sharing one database).
        .systemLibrary(
            name: "CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),

        // libwebsockets: the cloud node's HTTP + WebSocket server (one port, one service thread).
        .systemLibrary(
            name: "CWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"]), .brew(["libwebsockets"])]
        ),

        // Linux headers Glibc does not export (eventfd), for the WebSocket transport.
        .systemLibrary(name: "CSocketShims"),
        .systemLibrary(name: "CSpawnShims"),

        // MARK: Primitives
        // MPCCrypto's platform crypto (SHA-2, HMAC, AES-CTR, P-256) sits behind Sources/MPCCrypto/Backend: OpenSSL
        // here; SILENTSHARD_COMMONCRYPTO_SHIM=1 builds the CommonCrypto backend against a Linux shim instead
        // (scripts/check-commoncrypto-backend; see `commonCryptoShim` below).
        .target(
            name: "MPCCrypto",
            dependencies: ["CSecp256k1", "CSodium", linuxOpenSSL] + (commonCryptoShim ? ["CCommonCryptoShim"] : []),
            swiftSettings: commonCryptoShim ? [.define("SILENTSHARD_COMMONCRYPTO_SHIM")] : []
        ),

        // MARK: Protocols (pure state machines: messages in, messages out, no I/O)
        .target(name: "MPCProtocols", dependencies: ["MPCCrypto"]),

        // MARK: SDK
        // The SDK's privacy manifest ships in SilentShardCore's resource bundle on Apple platforms only
        // (every app links it through duo or trio); Linux builds have no bundle (docs/apple.md).
        .target(
            name: "SilentShardCore",
            dependencies: ["MPCProtocols", "MPCCrypto", linuxOpenSSL, .target(name: "CSocketShims", condition: .when(platforms: [.linux])),
                           "CSQLite"],
            exclude: appleBranch ? [] : ["PrivacyInfo.xcprivacy"],
            resources: appleBranch ? [.copy("PrivacyInfo.xcprivacy")] : []
        ),
        .target(name: "duo", dependencies: ["SilentShardCore", "MPCProtocols", "MPCCrypto"]),
        .target(name: "trio", dependencies: ["SilentShardCore", "MPCProtocols", "MPCCrypto"]),
        // Chain helpers over the SDK's public API only (issue 21).
        .target(name: "SilentShardChains", dependencies: ["SilentShardCore", "MPCCrypto"]),

        // MARK: Cloud node (server side): share store and the HTTP + WebSocket server.
        .target(name: "CloudNode", dependencies: ["SilentShardCore", "MPCCrypto", "MPCProtocols", "CSQLite", "CPostgres", "CWebSockets"]),

        // Test-only helpers shared by test targets: an in-memory NetworkClient pair, the Python peer.
        // Child processes without Foundation's Process (its Linux run() can crash; ChildProcess.swift).
        .target(name: "ChildProcesses", dependencies: ["MPCCrypto", "CSpawnShims"]),
        .target(name: "SilentShardTestSupport", dependencies: ["SilentShardCore", "MPCCrypto", "ChildProcesses", "InMemoryTransport"]),
        // Two NetworkClients joined by an in-memory pipe: tests, and the CLI's in-process benchmark
        // transport (so the CLI does not link test support). Apps never link it.
        .target(name: "InMemoryTransport", dependencies: ["SilentShardCore", "MPCCrypto"]),
        // Swift Testing traits for the test targets only (the `.heavy` gate); never linked into a product.
        .target(name: "SilentShardTestTraits"),

        // MARK: Executables
        .executableTarget(name: "silentshard", dependencies: ["MPCCrypto", "MPCProtocols", "SilentShardCore", "CloudNode", "duo", "trio",
                                                             "InMemoryTransport", "CSocketShims", "ChildProcesses", "SilentShardChains"]),
        .executableTarget(name: "silentshard-bench", dependencies: ["MPCCrypto", "MPCProtocols", "CSecp256k1"]),
        // A JSON-in/JSON-out oracle used only by the Python interop tests in interop/.
        .executableTarget(name: "silentshard-interop", dependencies: ["MPCCrypto", "MPCProtocols", "SilentShardCore", "SilentShardChains"]),
        // The app side of a trio presign/finish as its own process, pausing at numbered points so that
        // a test can SIGKILL it between any two steps (TrioPresignatureRestartTests). Test-only.
        .executableTarget(name: "silentshard-test-app", dependencies: ["trio", "SilentShardCore", "MPCCrypto"],
                          path: "Tests/CrashApp"),
        // One node process's rate limiter over a shared database, driven on stdin, so a test can count the
        // session.md §9.5 limits across two processes (ClusterRateLimitProcessTests). Test-only.
        .executableTarget(name: "silentshard-test-limits", dependencies: ["CloudNode", "MPCCrypto"],
                          path: "Tests/RateLimitProcess"),
        // libFuzzer targets for every decoder of outside bytes (Fuzz/README.md). Built for fuzzing by
        // scripts/fuzz with -D FUZZING and sanitizers; the normal build offers list/write-seeds/replay.
        .executableTarget(
            name: "silentshard-fuzz", dependencies: ["MPCCrypto", "MPCProtocols", "SilentShardCore", "CloudNode", "SilentShardChains"],
            path: "Fuzz/Harness"
        ),

        // The sample iOS wallet's logic (Examples/iOSApp: its SwiftUI files need Xcode; this part is compiled and
        // tested here, ExamplesTests).
        .target(name: "WalletCore", dependencies: ["duo", "SilentShardChains"], path: "Examples/iOSApp/WalletCore"),
        // MARK: Examples (each runs alone against an embedded node, or against --node URL --cloud-key HEX)
        .target(
            name: "ExampleSupport", dependencies: ["duo", "CloudNode", "SilentShardCore", "MPCCrypto"],
            path: "Examples/ExampleSupport"
        ),
        .executableTarget(
            name: "example-default-websocket", dependencies: ["duo", "ExampleSupport"], path: "Examples/DefaultWebSocket"
        ),
        .executableTarget(
            name: "example-subclassed-client", dependencies: ["duo", "ExampleSupport"], path: "Examples/SubclassedClient"
        ),
        .executableTarget(
            name: "example-custom-transport", dependencies: ["duo", "CloudNode", "ExampleSupport"],
            path: "Examples/CustomTransport"
        ),

        // MARK: Tests
        .testTarget(name: "MPCCryptoTests", dependencies: ["MPCCrypto", "CSecp256k1", "CSodium"]),
        .testTarget(name: "MPCProtocolsTests", dependencies: ["SilentShardTestTraits", "MPCProtocols", "MPCCrypto"]),
        .testTarget(name: "StorageTests", dependencies: ["SilentShardCore", "MPCCrypto", "MPCProtocols", "CSQLite",
                                                        "SilentShardTestSupport"]),
        .testTarget(
            name: "CloudNodeStoreTests", dependencies: ["CloudNode", "SilentShardCore", "MPCCrypto", "MPCProtocols", "CSQLite",
                                                     "SilentShardTestSupport"]
        ),
        .testTarget(
            name: "CloudNodeServerTests",
            dependencies: ["SilentShardTestTraits", "CloudNode", "duo", "trio", "SilentShardCore", "SilentShardTestSupport", "MPCCrypto", "ChildProcesses"]
        ),
        .testTarget(name: "ChildProcessesTests", dependencies: ["ChildProcesses"]),
        .testTarget(name: "SessionTests", dependencies: ["SilentShardCore", "MPCCrypto", "MPCProtocols"]),
        .testTarget(name: "ChainsTests", dependencies: ["SilentShardChains", "SilentShardCore", "MPCCrypto", "MPCProtocols"]),
        // The SDKs against real node servers over loopback sockets, both modes in one target on one harness
        // (Harness/: duo's node, trio's A and B, `EndToEndFixture(mode:)`); suites of one behaviour take a
        // `Keyshare.Mode` argument, mode-only suites sit in `Duo/` and `Trio/` (issue 34).
        .testTarget(name: "EndToEndTests", dependencies: ["SilentShardTestTraits", "duo", "trio", "CloudNode", "SilentShardCore", "MPCCrypto",
                                                        "MPCProtocols", "SilentShardTestSupport", "ChildProcesses"]),
        .testTarget(name: "TransportTests", dependencies: ["SilentShardCore", "SilentShardTestSupport", "MPCCrypto"]),
        // Runs the built example binaries (.build/debug/example-*) as subprocesses.
        .testTarget(name: "ExamplesTests", dependencies: ["SilentShardTestTraits", "ExampleSupport", "CloudNode", "SilentShardCore", "MPCCrypto",
                                                        "SilentShardTestSupport", "ChildProcesses", "WalletCore", "duo", "SilentShardChains"]),
        // App sessions against in-process nodes, both modes in one target on one harness (Harness/SessionFixture:
        // duo's node, trio's A and B); suites of one behaviour take a `Keyshare.Mode` argument (issue 34).
        .testTarget(
            name: "SessionFlowTests",
            dependencies: ["SilentShardTestTraits", "duo", "trio", "CloudNode", "SilentShardCore", "SilentShardTestSupport", "MPCCrypto",
                           "MPCProtocols"]
        ),
        // The node's pure state machines and decisions (commit, reconcile, rate limits, keyshare cache): no
        // sockets, processes or sessions, so it builds and runs fast.
        .testTarget(
            name: "NodeMachineTests",
            dependencies: ["CloudNode", "SilentShardCore", "MPCCrypto", "MPCProtocols", "SilentShardTestSupport"]
        ),
        // The seeds' samples must compile warning-free in every mode an app may use: duo's in Swift 5
        // mode, trio's with NonisolatedNonsendingByDefault (the rest of the package is Swift 6).
        .testTarget(
            name: "DuoTransportTests", dependencies: ["duo", "SilentShardTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "TrioTransportTests", dependencies: ["trio", "SilentShardTestSupport"],
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// SILENTSHARD_COMMONCRYPTO_SHIM=1 (CI only: scripts/check-commoncrypto-backend, in its own build path): MPCCrypto's
// CommonCrypto backend compiled on Linux against CCommonCryptoShim, a C module with Apple's CommonCrypto signatures
// over OpenSSL, and only MPCCryptoTests kept, so `swift test` runs the same known answers through that backend.
if commonCryptoShim {
    package.targets.append(.target(name: "CCommonCryptoShim", dependencies: ["COpenSSL"], path: "Sources/CCommonCryptoShim"))
    let kept: Set<String> = ["CSecp256k1", "CSodium", "COpenSSL", "CCommonCryptoShim", "MPCCrypto", "MPCCryptoTests"]
    package.targets.removeAll { !kept.contains($0.name) }
    package.products = [.library(name: "MPCCrypto", targets: ["MPCCrypto"])]
}
