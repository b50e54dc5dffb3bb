import Foundation
import SilentShardCore
import Testing

/// Release hygiene that code can check: the version constant, the changelog and the privacy manifest
/// agree with each other and with the SDK's sources (docs/apple.md).
@Suite("Release metadata")
struct ReleaseMetadataTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func versionIsSemanticAndTheChangelogsNewestEntry() throws {
        let version = SilentShard.version
        #expect(version.wholeMatch(of: /(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)/) != nil)
        let changelog = try String(contentsOf: Self.root.appending(path: "CHANGELOG.md"), encoding: .utf8)
        let newest = try #require(changelog.firstMatch(of: /\n## \[([^\]]+)\]/)?.output.1)
        #expect(String(newest) == version)
    }

    /// Apple's required-reason API categories, each with the calls of that category the SDK could make
    /// (Apple's list, as far as Swift sources on Linux can spell them).
    static let requiredReasonAPIs: [String: String] = [
        "NSPrivacyAccessedAPICategoryFileTimestamp":
            #"\b(?:stat|fstat|fstatat|lstat|getattrlist|getattrlistbulk|fgetattrlist|getattrlistat)\(|\b(?:creationDate|modificationDate|fileModificationDate|contentModificationDateKey|creationDateKey)\b"#,
        "NSPrivacyAccessedAPICategorySystemBootTime": #"\b(?:systemUptime|mach_absolute_time)\b"#,
        "NSPrivacyAccessedAPICategoryDiskSpace":
            #"\b(?:statfs|statvfs|fstatfs|fstatvfs|volumeAvailableCapacity\w*|volumeTotalCapacityKey|systemFreeSize|systemSize)\b"#,
        "NSPrivacyAccessedAPICategoryActiveKeyboards": #"\bactiveInputModes\b"#,
        "NSPrivacyAccessedAPICategoryUserDefaults": #"\bUserDefaults\b"#,
    ]

    /// The manifest declares no tracking and no collected data, and exactly the required-reason API
    /// categories the SDK's sources use: a new use (say, `UserDefaults`) fails here until declared.
    @Test func privacyManifestDeclaresWhatTheSDKUses() throws {
        let url = Self.root.appending(path: "Sources/SilentShardCore/PrivacyInfo.xcprivacy")
        let plist = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any]
        )
        #expect(plist["NSPrivacyTracking"] as? Bool == false)
        #expect((plist["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)
        #expect((plist["NSPrivacyCollectedDataTypes"] as? [Any])?.isEmpty == true)
        let entries = try #require(plist["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        var declared: [String: [String]] = [:]
        for entry in entries {
            let type = try #require(entry["NSPrivacyAccessedAPIType"] as? String)
            declared[type] = try #require(entry["NSPrivacyAccessedAPITypeReasons"] as? [String])
        }

        // ICU regular expressions (Swift Regex's `\b` misses the boundary before a "." on this toolchain).
        let patterns = try Self.requiredReasonAPIs.mapValues { try NSRegularExpression(pattern: $0) }
        var used: Set<String> = []
        let sdk = ["MPCCrypto", "MPCProtocols", "SilentShardCore", "duo", "trio", "SilentShardChains", "Apple"]
        for target in sdk {
            let directory = Self.root.appending(path: "Sources/\(target)")
            let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
            for case let file as URL in files where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                let whole = NSRange(text.startIndex..., in: text)
                for (category, pattern) in patterns where pattern.firstMatch(in: text, range: whole) != nil {
                    used.insert(category)
                }
            }
        }
        #expect(used == ["NSPrivacyAccessedAPICategoryFileTimestamp"])
        #expect(Set(declared.keys) == used)
        // C617.1: metadata of files inside the app's container (the file store's own records).
        #expect(declared["NSPrivacyAccessedAPICategoryFileTimestamp"] == ["C617.1"])
    }
}
