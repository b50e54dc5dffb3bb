import MPCCrypto
import Foundation
import SilentShardCore

/// The messages of one node session from all its connections (duo's node: the app's; trio's A: the
/// app's and the link to B; trio's B: the link from A), merged into one queue in arrival order, each read with a
/// deadline. A reader task per connection pushes messages and finally its close; `next` waits for
/// the next event or the deadline (session.md §5.4: each expected frame ≤ 30 s).
final class NodeInbox: Sendable {
    /// Where a message came from.
    enum Source: Sendable, Equatable { case app, peer }

    enum Event: Sendable {
        case message([UInt8], Source)
        case closed(Source)
        case timeout
    }

    private struct State {
        var queue: [Event] = []
        var waiter: CheckedContinuation<Event, Never>?
        var waiterToken: UUID?
        /// A connection that ended ends the session: once its close was delivered, every later
        /// `next` on an empty queue reports it again at once.
        var closed: Source?
        var readers: [Task<Void, Never>] = []
        /// Readers waiting for the queue to drop below `capacity`.
        var spaceWaiters: [CheckedContinuation<Void, Never>] = []
        var stopped = false
    }

    /// At most this many events wait in the queue; a reader then stops reading its connection until the
    /// session takes one, so the connection's own backpressure reaches the peer (security review
    /// finding 6: an unbounded queue let a peer fill the node's memory during a busy step).
    static let capacity = 8

    private let state = LockedValue(State())
    private let deadlines: NodeDeadlines

    init(deadlines: NodeDeadlines = .system) {
        self.deadlines = deadlines
    }

    /// Starts reading `connection` until it fails or closes.
    func attach(_ connection: any NodeStepConnection, as source: Source) {
        let task = Task { [weak self] in
            while true {
                await self?.waitForSpace()
                if Task.isCancelled { return }
                do {
                    let data = try await connection.read()
                    self?.push(.message([UInt8](data), source))
                } catch {
                    self?.push(.closed(source))
                    return
                }
            }
        }
        state.withLock { $0.readers.append(task) }
    }

    private func push(_ event: Event) {
        let waiter: CheckedContinuation<Event, Never>? = state.withLock { s in
            if let waiter = s.waiter {
                s.waiter = nil
                s.waiterToken = nil
                _ = Self.deliver(event, &s)
                return waiter
            }
            s.queue.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Suspends a reader while the queue is full (not after `stop`).
    private func waitForSpace() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.stopped || s.queue.count < Self.capacity { return true }
                s.spaceWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Wakes the waiting readers once the queue has room again.
    private func releaseSpace() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { s in
            guard s.stopped || s.queue.count < Self.capacity else { return [] }
            defer { s.spaceWaiters = [] }
            return s.spaceWaiters
        }
        waiters.forEach { $0.resume() }
    }

    /// The next event, or `.timeout` after `timeout`.
    func next(timeout: Duration) async -> Event {
        defer { releaseSpace() }
        if let ready = state.withLock({ s -> Event? in
            if !s.queue.isEmpty { return Self.deliver(s.queue.removeFirst(), &s) }
            return s.closed.map { .closed($0) }
        }) { return ready }
        let token = UUID()
        let timer = LockedValue<Task<Void, Never>?>(nil)
        defer { timer.withLock { $0?.cancel() } }
        return await withCheckedContinuation { continuation in
            let immediate: Event? = state.withLock { s in
                if !s.queue.isEmpty { return Self.deliver(s.queue.removeFirst(), &s) }
                if let closed = s.closed { return .closed(closed) }
                s.waiter = continuation
                s.waiterToken = token
                return nil
            }
            if let immediate {
                continuation.resume(returning: immediate)
                return
            }
            let task = Task { [weak self, deadlines] in
                guard (try? await deadlines.sleep(timeout)) != nil else { return }
                self?.expire(token)
            }
            timer.withLock { $0 = task }
        }
    }

    private static func deliver(_ event: Event, _ state: inout State) -> Event {
        if case .closed(let source) = event, state.closed == nil { state.closed = source }
        return event
    }

    private func expire(_ token: UUID) {
        let waiter: CheckedContinuation<Event, Never>? = state.withLock { s in
            guard s.waiterToken == token else { return nil }
            defer { s.waiter = nil; s.waiterToken = nil }
            return s.waiter
        }
        guard let waiter else { return }
        deadlines.expired()
        waiter.resume(returning: .timeout)
    }

    /// Stops the reader tasks (their connections are closed by the runner).
    func stop() {
        let (readers, waiters) = state.withLock { s in
            s.stopped = true
            defer { s.spaceWaiters = [] }
            return (s.readers, s.spaceWaiters)
        }
        readers.forEach { $0.cancel() }
        waiters.forEach { $0.resume() }
    }
}
