// `import duo` brings the SDK core and Foundation (the seed samples use `Data` with only `import duo`).
@_exported import Foundation
@_exported import SilentShardCore
