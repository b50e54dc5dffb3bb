// The in-memory `NetworkClient` pair lives in its own module (the CLI's in-process benchmark uses it
// without linking test support); tests keep getting it from here.
@_exported import InMemoryTransport
