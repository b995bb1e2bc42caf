import Foundation
import GooglePlay
import SourceHTTP
import Testing

/// The shared Google token refresh that several users wait on never holds one of them past its own
/// deadline.
@Suite("Google OAuth: waiting on the shared refresh is bounded", .timeLimit(.minutes(1)))
struct GoogleTokenDeadlineTests {
    @Test("callers waiting on a refresh that never ends stop at their own deadlines, all sharing that one refresh")
    func waitersLeaveAtDeadline() async throws {
        let calls = GoogleTokenTests.FetchCounter()
        let tokens = GoogleAccessTokens { now in
            if await calls.next() == 1 {
                // A token endpoint that keeps the refresh for an hour (ignoring cancellation: nobody owns it).
                try? await Task.sleep(for: .seconds(3600))
                throw GoogleTokenError("late")
            }
            return GoogleAccessToken(value: "fresh", reuseUntil: now.addingTimeInterval(600))
        }
        let start = ContinuousClock.now
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    let (value, cutOff) = await LookupDeadline.run(within: .milliseconds(300)) { () async -> Bool in
                        (try? await tokens.token()) != nil
                    }
                    return cutOff && value == false
                }
            }
            var all: [Bool] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes == Array(repeating: true, count: 5), "every waiter was cut off at its deadline without a token")
        #expect(ContinuousClock.now - start < .seconds(10))
        #expect(await tokens.refreshes == 1, "they shared one refresh")
    }

    @Test("a caller already cancelled gets CancellationError and starts no refresh it cannot use")
    func cancelledCaller() async throws {
        let tokens = GoogleAccessTokens { now in GoogleAccessToken(value: "t", reuseUntil: now.addingTimeInterval(600)) }
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await tokens.token()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(await tokens.refreshes == 0)
        #expect(try await tokens.token().value == "t")
    }
}
