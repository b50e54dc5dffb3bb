import MPCProtocols

/// Operations (SETUP 0x03). `preSignFinal` (6) exists only in routes and LINK_OPEN. What each one is — its route
/// action, modes, transport, algorithms, SETUP fields, admission and runs — is its row in ``OperationTable``.
package enum SessionOperation: UInt8, Sendable, CaseIterable {
    case keygen = 1, reconcile = 2, refresh = 3, sign = 4, preSign = 5, preSignFinal = 6, recover = 7
    case export = 8, `import` = 9, hardDerivation = 10

    /// The operation's row of the one operation table.
    package var row: OperationRow { OperationTable.row(self) }

    /// Whether the operation changes shares and ends with the commit exchange (session.md §5.1, §7).
    package var changesShares: Bool { row.changesShares }

    /// Whether the operation exists in `mode` for `algorithm` (session.md §5.1): served in the mode (by WebSocket or
    /// POST) and for the algorithm.
    package func isOffered(mode: SessionMode, algorithm: SessionAlgorithm) -> Bool {
        row.transports[mode] != nil && row.algorithms.contains(algorithm)
    }

    /// The operation's name: its token scope (session.md §9.1) and its name in events.
    package var name: String { row.name }
}

/// How an operation's request reaches a node in a mode.
package enum OperationTransport: Sendable, Equatable {
    /// A WebSocket step (`/v3/{algorithm}/{action}`, trio `/v3/{path}[/eddsa]/{action}`).
    case webSocket
    /// One HTTP POST (duo export, preSignFinal).
    case post
}

/// What a WebSocket step's admission runs besides the stages every SETUP passes (validation, replay, authorization,
/// key state): the node's admission plan (`AdmissionPlans` in `CloudNode`) maps this profile to its stages. The rate
/// limit, lease and ban fields apply to the operation's WebSocket steps only; a POST (`post`) runs its pipeline's fixed
/// stages (`AdmissionPlans.exportPost`, the presignature plans), so changing them does not change a POST's admission.
package struct AdmissionProfile: Sendable, Equatable {
    /// Which rate limit counts the step (session.md §9.5), if any.
    package enum RateLimit: Sendable, Equatable {
        /// The principal's hourly count of new keys (keygen, import, a hard child).
        case keyCreation
        /// The key's concurrent signing sessions.
        case signingSession
    }

    /// Which POST pipeline a POST request runs (`AdmissionPlans.exportPost`, `.presignatureRequest`).
    package enum Post: Sendable, Equatable {
        /// The duo export POST (session.md §9.3).
        case export
        /// A preSignFinal body: FINAL_REQUEST, PRESIG_QUERY or a relay (session.md §8.3–8.6).
        case presignature
    }

    package var rateLimit: RateLimit?
    /// Whether the step takes the key's lease (share-changing steps and reconcile).
    package var lease: Bool
    /// Whether a banned device is refused (all but reconcile, session.md §9.4).
    package var ban: Bool
    /// The POST pipeline, for an operation some mode serves by POST.
    package var post: Post? = nil
}

/// Whether a SETUP field (session.md §4.2) must, may or must not be present for an operation (the node's
/// `SetupFieldRules` checks it, session.md §4.3 step 8).
package enum SetupFieldPresence: Sendable { case required, optional, forbidden }

/// One row of the operation table.
package struct OperationRow: Sendable {
    /// Which parties a SETUP names (session.md §4.3).
    package enum Participants: Sendable { case everyone, appAndOneSigner }
    /// What SETUP's path must be, when present.
    package enum PathRule: Sendable { case any, soft, notEmpty }

    /// The operation's name (token scope, events).
    package let name: String
    /// The route's last segment (session.md §2), the SDK's default action string.
    package let action: String
    /// The modes that serve it and how (no entry: not served in that mode).
    package let transports: [SessionMode: OperationTransport]
    /// The algorithms it exists for.
    package let algorithms: Set<SessionAlgorithm>
    /// Whether it changes shares and ends with the commit exchange (session.md §7).
    package let changesShares: Bool
    /// Whether its new keyshare has a key id of its own, not the SETUP's (a hard child).
    package let newKeyID: Bool
    /// SETUP 0x0C–0x15 (and 0x09 in trio) it requires or allows; everything not listed is forbidden.
    package let setupFields: [UInt8: SetupFieldPresence]
    /// Which parties its SETUP names.
    package let participants: Participants
    /// What its SETUP's path must be, when present.
    package let path: PathRule
    /// The WebSocket step's admission profile.
    package let admission: AdmissionProfile
    /// Per algorithm, the protocol tags its run may receive (each run type's own set; empty: the operation runs no
    /// protocol). The node's run factory for an operation with tags is keyed by the operation in `CloudNode`
    /// (`NodeProtocolRun.factories`, design.md §9).
    package let receivableTags: [SessionAlgorithm: Set<UInt16>]
}

/// The one operation table (issue 34 item 2). The node's route table (`NodeRouteTable.standard`), its step handler's
/// action mapping, the operations each node serves, the token scopes, the admission profile, the SETUP field rules
/// and the app's receivable tags and event names all derive from it. Adding an operation is one row here and its run
/// type in `Session/Runs/` (with, for a run at a node, its node factory keyed by the operation in `CloudNode`'s
/// `NodeProtocolRun.factories`).
package enum OperationTable {
    private typealias T = SetupPayload.Tag
    private static let both: Set<SessionAlgorithm> = [.ecdsa, .eddsa]
    private static let everywhere: [SessionMode: OperationTransport] = [.duo: .webSocket, .trio: .webSocket]
    private static let dkg: [SessionAlgorithm: Set<UInt16>] = [.ecdsa: DKLsDKGRun.receivableTags,
                                                               .eddsa: FROSTDKGRun.receivableTags]

    /// The row of `operation`.
    package static func row(_ operation: SessionOperation) -> OperationRow { rows[operation] ?? makeRow(operation) }

    /// Every row, built once (a row is looked up on every request, before authentication too).
    private static let rows: [SessionOperation: OperationRow] =
        Dictionary(uniqueKeysWithValues: SessionOperation.allCases.map { ($0, makeRow($0)) })

    private static func makeRow(_ operation: SessionOperation) -> OperationRow {
        switch operation {
        case .keygen:
            OperationRow(name: "keygen", action: "keygen", transports: everywhere, algorithms: both, changesShares: true,
                         newKeyID: false, setupFields: [:], participants: .everyone, path: .any,
                         admission: AdmissionProfile(rateLimit: .keyCreation, lease: true, ban: true),
                         receivableTags: dkg)
        case .reconcile:
            OperationRow(name: "reconcile", action: "reconcile", transports: everywhere, algorithms: both,
                         changesShares: false, newKeyID: false,
                         setupFields: [T.keyID: .required, T.appState: .required, T.groupID: .required],
                         participants: .everyone, path: .any,
                         admission: AdmissionProfile(rateLimit: nil, lease: true, ban: false),
                         receivableTags: [:])
        case .refresh:
            OperationRow(name: "refresh", action: "refresh", transports: everywhere, algorithms: both, changesShares: true,
                         newKeyID: false,
                         setupFields: [T.keyID: .required, T.gen: .required, T.holders: .optional, T.groupID: .required],
                         participants: .everyone, path: .any, admission: AdmissionProfile(rateLimit: nil, lease: true, ban: true),
                         receivableTags: dkg)
        case .sign:
            OperationRow(name: "sign", action: "sign", transports: everywhere, algorithms: both, changesShares: false,
                         newKeyID: false,
                         setupFields: [T.keyID: .required, T.gen: .required, T.path: .required, T.message: .required,
                                       T.groupID: .required],
                         participants: .appAndOneSigner, path: .soft,
                         admission: AdmissionProfile(rateLimit: .signingSession, lease: false, ban: true),
                         receivableTags: [.ecdsa: DKLsSignRun.receivableTags, .eddsa: FROSTSignRun.receivableTags])
        case .preSign:
            OperationRow(name: "preSign", action: "presign", transports: everywhere, algorithms: both, changesShares: false,
                         newKeyID: false,
                         setupFields: [T.keyID: .required, T.gen: .required, T.path: .required, T.presignTTL: .optional,
                                       T.groupID: .required],
                         participants: .appAndOneSigner, path: .soft,
                         admission: AdmissionProfile(rateLimit: .signingSession, lease: false, ban: true),
                         receivableTags: [.ecdsa: DKLsPresignRun.receivableTags, .eddsa: FROSTPresignRun.receivableTags])
        case .preSignFinal:
            OperationRow(name: "preSignFinal", action: "presign-final", transports: [.duo: .post, .trio: .post],
                         algorithms: both, changesShares: false, newKeyID: false, setupFields: [:], participants: .everyone,
                         path: .any, admission: AdmissionProfile(rateLimit: nil, lease: false, ban: true, post: .presignature),
                         receivableTags: [:])
        case .recover:
            // gid optional for recover (deviation, session.md §13.3 item 11): an app that lost its keyshare
            // may not know its group; the key itself is pinned by public_key, and the ACCEPTs' group is checked.
            OperationRow(name: "recover", action: "recover", transports: [.trio: .webSocket], algorithms: both,
                         changesShares: true, newKeyID: false,
                         setupFields: [T.keyID: .required, T.publicKey: .required, T.holders: .required, T.groupID: .optional],
                         participants: .everyone, path: .any, admission: AdmissionProfile(rateLimit: nil, lease: true, ban: true),
                         receivableTags: [.ecdsa: DKLsDKGRun.receivableTags, .eddsa: FROSTRecoverRun.receivableTags])
        case .export:
            OperationRow(name: "export", action: "export", transports: [.duo: .post, .trio: .webSocket], algorithms: both,
                         changesShares: false, newKeyID: false,
                         setupFields: [T.keyID: .required, T.gen: .required, T.exportKey: .required, T.groupID: .required],
                         participants: .everyone, path: .any,
                         admission: AdmissionProfile(rateLimit: nil, lease: false, ban: true, post: .export),
                         receivableTags: [.ecdsa: DKLsExportRun.receivableTags, .eddsa: FROSTExportRun.receivableTags])
        case .import:
            OperationRow(name: "import", action: "import", transports: everywhere, algorithms: both, changesShares: true,
                         newKeyID: false, setupFields: [T.keyID: .required, T.publicKey: .required, T.chainCode: .required],
                         participants: .everyone, path: .any,
                         admission: AdmissionProfile(rateLimit: .keyCreation, lease: true, ban: true),
                         receivableTags: dkg)
        case .hardDerivation:
            OperationRow(name: "hardDerivation", action: "hard-derivation", transports: [.trio: .webSocket],
                         algorithms: [.ecdsa], changesShares: true, newKeyID: true,
                         setupFields: [T.keyID: .required, T.gen: .required, T.path: .required, T.groupID: .required],
                         participants: .everyone, path: .notEmpty,
                         // A hard child is a new key: counted with keygens and imports (second review finding 8).
                         admission: AdmissionProfile(rateLimit: .keyCreation, lease: true, ban: true),
                         receivableTags: [.ecdsa: DKLsHardDerivationRun.receivableTags])
        }
    }

    /// The operation whose route action is `action` and that some mode serves over WebSocket (nil: none; a POST
    /// action such as `presign-final` is no WebSocket step).
    package static func webSocketOperation(action: String) -> SessionOperation? {
        SessionOperation.allCases.first { $0.row.action == action && $0.row.transports.values.contains(.webSocket) }
    }

    /// The operation whose route action is `action` and that `mode` serves by POST (nil: none).
    package static func postOperation(action: String, in mode: SessionMode) -> SessionOperation? {
        SessionOperation.allCases.first { $0.row.action == action && $0.row.transports[mode] == .post }
    }

    /// The operations `mode` serves over WebSocket steps.
    package static func webSocketOperations(in mode: SessionMode) -> Set<SessionOperation> {
        Set(SessionOperation.allCases.filter { $0.row.transports[mode] == .webSocket })
    }

    /// The route actions `mode` serves for `algorithm`, over `transport` (nil: either).
    package static func actions(in mode: SessionMode, algorithm: SessionAlgorithm? = nil,
                                transport: OperationTransport? = nil) -> Set<String> {
        Set(SessionOperation.allCases.compactMap { operation -> String? in
            let row = operation.row
            guard let served = row.transports[mode], transport == nil || served == transport,
                  algorithm.map(row.algorithms.contains) ?? true else { return nil }
            return row.action
        })
    }
}
