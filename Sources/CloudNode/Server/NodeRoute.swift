import SilentShardCore

/// Which client family a route belongs to (session.md §2.1).
package enum NodeMode: String, Sendable, Equatable {
    /// Two parties: app and this node; subprotocol `duo-instance`.
    case duo
    /// Three parties: app and two nodes; subprotocol `trio`.
    case trio
    /// The inter-node link of a trio cluster (`/v3/peer`, session.md §2.3); subprotocol `silentshard-peer`.
    /// Authenticated by its first frame (LINK_OPEN), not by an app token.
    case peer

    /// The WebSocket subprotocol a connection on this mode's routes must select.
    package var subprotocol: String {
        switch self {
        case .duo: "duo-instance"
        case .trio: "trio"
        case .peer: "silentshard-peer"
        }
    }
}

/// One step's address, parsed from the request path: duo `/v3/{algorithm}/{action}`, trio
/// `/v3/{path}/{action}` (ECDSA) and `/v3/{path}/eddsa/{action}` (EdDSA).
package struct NodeRoute: Sendable, Equatable, CustomStringConvertible {
    package var mode: NodeMode
    package var algorithm: SessionAlgorithm
    /// Trio: the first segment (`trio` by default). Duo: `duo`.
    package var path: String
    /// The last segment, for example `keygen`.
    package var action: String

    package init(mode: NodeMode, algorithm: SessionAlgorithm, path: String, action: String) {
        self.mode = mode
        self.algorithm = algorithm
        self.path = path
        self.action = action
    }

    /// `mode/algorithm/action` (with the trio path), for logs and metrics labels.
    package var description: String {
        switch mode {
        case .duo: "duo/\(algorithm.routeName)/\(action)"
        case .trio: "trio/\(path)/\(algorithm.routeName)/\(action)"
        case .peer: "peer"
        }
    }

    /// The inter-node link route `/v3/peer`.
    package static let peerLink = NodeRoute(mode: .peer, algorithm: .ecdsa, path: "peer", action: "peer")
}

/// The routes a node serves. Anything else is an unknown route (404 / rejected upgrade).
package struct NodeRouteTable: Sendable {
    /// Duo actions served over WebSocket (both algorithms).
    package var duoActions: Set<String>
    /// Duo actions served over HTTP POST (`export`, called by the app's backend).
    package var duoPostActions: Set<String>
    /// Trio route prefixes (the `path` of the trio actions; `trio` by default).
    package var trioPaths: Set<String>
    /// Trio ECDSA actions.
    package var trioECDSAActions: Set<String>
    /// Trio EdDSA actions.
    package var trioEdDSAActions: Set<String>
    /// Trio actions served over HTTP POST (`presign-final`).
    package var trioPostActions: Set<String>
    /// Whether `/v3/peer` (the trio inter-node link) is a route. Only ``peerLinkOnly`` has it: node B
    /// serves the link on its separate peer listener (``NodeServerConfiguration/peerListener``), never on
    /// the apps' listener (security review finding 5).
    package private(set) var peerLink: Bool = false

    /// The SDK's stock routing (Sources/duo/Actions, Sources/trio/Actions), derived from the operation table: duo's
    /// WebSocket and POST actions; trio's actions per algorithm (every transport) and its POST actions.
    package static let standard = NodeRouteTable(
        duoActions: OperationTable.actions(in: .duo, transport: .webSocket),
        duoPostActions: OperationTable.actions(in: .duo, transport: .post),
        trioPaths: ["trio"],
        trioECDSAActions: OperationTable.actions(in: .trio, algorithm: .ecdsa),
        trioEdDSAActions: OperationTable.actions(in: .trio, algorithm: .eddsa),
        trioPostActions: OperationTable.actions(in: .trio, transport: .post)
    )

    /// Node B's peer listener: `/v3/peer` and nothing else.
    package static let peerLinkOnly: NodeRouteTable = {
        var table = NodeRouteTable(duoActions: [], duoPostActions: [], trioPaths: [], trioECDSAActions: [], trioEdDSAActions: [],
                                   trioPostActions: [])
        table.peerLink = true
        return table
    }()

    /// The same table without `/v3/peer` (what an apps' listener serves).
    var withoutPeerLink: NodeRouteTable {
        var table = self
        table.peerLink = false
        return table
    }

    package init(duoActions: Set<String>, duoPostActions: Set<String>, trioPaths: Set<String>, trioECDSAActions: Set<String>,
                trioEdDSAActions: Set<String>, trioPostActions: Set<String>) {
        self.duoActions = duoActions
        self.duoPostActions = duoPostActions
        self.trioPaths = trioPaths
        self.trioECDSAActions = trioECDSAActions
        self.trioEdDSAActions = trioEdDSAActions
        self.trioPostActions = trioPostActions
    }

    /// The route of a WebSocket upgrade or a POST to `uriPath` (percent-decoded, no query), or nil.
    /// `post` selects the POST action sets.
    package func route(for uriPath: String, post: Bool) -> NodeRoute? {
        guard uriPath.utf8.count <= 512 else { return nil }
        let segments = uriPath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if !post, peerLink, segments == ["", "v3", "peer"] { return .peerLink }
        // "/v3/a/b" splits into ["", "v3", "a", "b"].
        guard segments.count >= 4, segments[0].isEmpty, segments[1] == "v3" else { return nil }
        let rest = Array(segments.dropFirst(2))
        if rest.count == 2, let algorithm = SessionAlgorithm.allCases.first(where: { $0.routeName == rest[0] }) {
            let actions = post ? duoPostActions : duoActions
            guard actions.contains(rest[1]) else { return nil }
            return NodeRoute(mode: .duo, algorithm: algorithm, path: "duo", action: rest[1])
        }
        // The duo client's POST URL (`DuoNetworkAction.path` feeds it): /v3/duo/{action}, /v3/duo/eddsa/{action}.
        if post, rest[0] == "duo", !trioPaths.contains("duo") {
            let export = SessionOperation.export.row.action
            if rest.count == 2, duoPostActions.contains(rest[1]), rest[1] != export {
                return NodeRoute(mode: .duo, algorithm: .ecdsa, path: "duo", action: rest[1])
            }
            if rest.count == 3, rest[1] == "eddsa", duoPostActions.contains(rest[2]), rest[2] != export {
                return NodeRoute(mode: .duo, algorithm: .eddsa, path: "duo", action: rest[2])
            }
            return nil
        }
        guard trioPaths.contains(rest[0]) else { return nil }
        if rest.count == 2 {
            guard trioECDSAActions.contains(rest[1]), !post || trioPostActions.contains(rest[1]) else { return nil }
            return NodeRoute(mode: .trio, algorithm: .ecdsa, path: rest[0], action: rest[1])
        }
        if rest.count == 3, rest[1] == "eddsa" {
            guard trioEdDSAActions.contains(rest[2]), !post || trioPostActions.contains(rest[2]) else { return nil }
            return NodeRoute(mode: .trio, algorithm: .eddsa, path: rest[0], action: rest[2])
        }
        return nil
    }
}
