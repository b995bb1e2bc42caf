import Foundation
import SubreconCore
import SubreconJob
import SubreconPorts
import Synchronization

/// A `FactSource` answering scripted `SourceFacts` per user id, for unit tests of the job without a network: each
/// user's answer, an optional delay before it, or a stall until the lookup is cancelled; a user with no script is
/// answered `unscripted` (by default a RevenueCat fetch error). Counts every question, per user and in order.
public final class ScriptedFactSource: FactSource {
    /// What the source answers about one user.
    public enum Answer: Sendable {
        /// These facts, after `delay`.
        case facts(SourceFacts, delay: Duration = .zero)
        /// The source failed (`SourceFacts.failed`), after `delay`.
        case error(SourceError, delay: Duration = .zero)
        /// No answer until the lookup is cancelled (a hung source; the per-user deadline or a stop ends it).
        case stall
    }

    struct State {
        var answers: [String: Answer]
        var asked: [String] = []
        var hook: (@Sendable (String, Int) -> Void)?
    }

    let state: Mutex<State>
    let unscripted: Answer

    public init(
        _ answers: [String: Answer] = [:],
        unscripted: Answer = .error(SourceError(origin: .revenueCat, kind: .fetch, message: "no scripted answer"))
    ) {
        state = Mutex(State(answers: answers))
        self.unscripted = unscripted
    }

    /// Sets (or replaces) one user's answer.
    public func script(_ userID: String, _ answer: Answer) { state.withLock { $0.answers[userID] = answer } }

    /// Calls `hook` with each user id and the number of questions so far (this one included), before answering: a
    /// test's way to act mid-run (stop it, write a row as a webhook would).
    public func whenAsked(_ hook: @escaping @Sendable (String, Int) -> Void) { state.withLock { $0.hook = hook } }

    /// Every user asked, in the order asked (a user asked twice appears twice).
    public var asked: [String] { state.withLock { $0.asked } }

    /// How many times each user was asked.
    public var askedCount: [String: Int] { asked.reduce(into: [:]) { $0[$1, default: 0] += 1 } }

    public func facts(for row: UserRow) async -> SourceFacts {
        let (answer, count, hook) = state.withLock { state in
            state.asked.append(row.id)
            return (state.answers[row.id] ?? unscripted, state.asked.count, state.hook)
        }
        hook?(row.id, count)
        switch answer {
        case .facts(let facts, let delay):
            if delay > .zero { try? await Task.sleep(for: delay) }
            return facts
        case .error(let error, let delay):
            if delay > .zero { try? await Task.sleep(for: delay) }
            return .failed(error)
        case .stall:
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return .failed(SourceError(origin: .revenueCat, kind: .fetch, message: "cancelled"))
        }
    }
}

/// A settable clock for the job's `now` and the database's `updated_at`: starts at `start` and moves only when told.
public final class TestClock: Sendable {
    private let instant: Mutex<Date>

    public init(_ start: Date) { instant = Mutex(start) }

    /// The current instant; usable as the job's `now: @Sendable () -> Date`.
    public func now() -> Date { instant.withLock { $0 } }

    public func advance(by seconds: TimeInterval) { instant.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
