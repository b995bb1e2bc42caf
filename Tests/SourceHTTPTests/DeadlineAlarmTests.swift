import Foundation
import SourceHTTP
import Testing

/// A deadline raced against the work it bounds (`DeadlineAlarm`): the work's own answer when it ends first, its
/// cancellation at the deadline otherwise, and the caller's cancellation passed on.
@Suite("DeadlineAlarm: work raced against its deadline", .timeLimit(.minutes(1)))
struct DeadlineAlarmTests {
    /// What the work saw: how it ended and how long it ran.
    struct Ending: Sendable, Equatable {
        var cancelled: Bool
        var seconds: Double
    }

    /// Work that waits up to `seconds` for nothing, reporting whether it was cancelled first.
    static func waiting(_ seconds: Double) -> @Sendable () async throws -> Ending {
        {
            let start = Date()
            let cancelled: Bool
            do {
                try await Task.sleep(for: .seconds(seconds))
                cancelled = false
            } catch {
                cancelled = true
            }
            return Ending(cancelled: cancelled, seconds: Date().timeIntervalSince(start))
        }
    }

    @Test("work that ends first gives its value and is not cut off, even when the deadline passes later")
    func workEndsFirst() async throws {
        let (outcome, cutOff) = await DeadlineAlarm.race(until: .now.advanced(by: .milliseconds(200))) { 42 }
        #expect(try outcome.get() == 42)
        #expect(!cutOff)
        // The deadline passing afterwards changes nothing that was answered.
        try await Task.sleep(for: .milliseconds(300))
        #expect(try outcome.get() == 42)
    }

    @Test("at the deadline the work is cancelled at once and the race says it was cut off")
    func deadlineCancelsTheWork() async throws {
        let start = ContinuousClock.now
        let (outcome, cutOff) = await DeadlineAlarm.race(until: .now.advanced(by: .milliseconds(100)), Self.waiting(30))
        let ending = try outcome.get()
        #expect(cutOff)
        #expect(ending.cancelled)
        #expect(ending.seconds >= 0.09)
        #expect((ContinuousClock.now - start) < .seconds(10))
    }

    @Test("a deadline already past cancels the work before it gets anywhere")
    func pastDeadline() async throws {
        let (outcome, cutOff) = await DeadlineAlarm.race(until: .now.advanced(by: .seconds(-1)), Self.waiting(30))
        #expect(cutOff)
        #expect(try outcome.get().cancelled)
    }

    @Test("cancelling the caller cancels the work; the deadline, far off, did not cut it")
    func callerCancellation() async throws {
        let race = Task { await DeadlineAlarm.race(until: .now.advanced(by: .seconds(60)), Self.waiting(30)) }
        try await Task.sleep(for: .milliseconds(100))
        race.cancel()
        let (outcome, cutOff) = await race.value
        #expect(try outcome.get().cancelled)
        #expect(!cutOff)
    }

    @Test("an error the work throws is its answer")
    func workThrows() async {
        struct Refused: Error {}
        let (outcome, cutOff) = await DeadlineAlarm.race(until: .now.advanced(by: .seconds(60))) { () throws -> Int in throw Refused() }
        #expect(throws: Refused.self) { try outcome.get() }
        #expect(!cutOff)
    }

    @Test("the work sees the caller's task-local values (the lookup's deadline)")
    func taskLocalsReachTheWork() async {
        let (seen, cutOff) = await LookupDeadline.run(within: .seconds(60)) { LookupDeadline.instant }
        #expect(seen != nil)
        #expect(!cutOff)
    }

    @Test("thousands of races the work wins leave no alarm to ring: none cuts off a later race's work")
    func manyEarlyFinishes() async throws {
        let cutOffs = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<2_000 {
                group.addTask {
                    await DeadlineAlarm.race(until: .now.advanced(by: .milliseconds(2_000 + index % 50))) { index }.cutOff
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(cutOffs == 0)
        // And the next race whose work outlives its deadline is still cut off.
        let (_, cutOff) = await DeadlineAlarm.race(until: .now.advanced(by: .milliseconds(50)), Self.waiting(30))
        #expect(cutOff)
    }
}
