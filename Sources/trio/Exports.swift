// `import trio` brings the SDK core and Foundation (the seed samples use `Data` with only `import trio`).
@_exported import Foundation
@_exported import SilentShardCore
