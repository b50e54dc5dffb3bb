// The wire and engine module shared with the node (issue 34 item 4): re-exported, so the facades, the node and the
// tests that import the SDK see its types as before.
@_exported import SessionEngine
