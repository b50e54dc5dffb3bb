// The wire and engine module shared with the node (issue 34 item 4), re-exported: every file of this module sees its
// types without an import of its own (an `@_exported` import is module-wide), and so does every file that imports the
// SDK (the facades, the CLI, the tests, the node's files that also name SDK types).
@_exported import SessionEngine
