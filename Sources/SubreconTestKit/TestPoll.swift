import Foundation

/// Polling with a deadline: every wait in a test ends, so a condition that never comes is a failure, not a hung run.
public enum TestPoll {
    /// Checks `condition` every `interval` until it holds (true) or `seconds` passed (false).
    public static func until(
        seconds: Int, interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool
    ) async throws -> Bool {
        try await until(.seconds(seconds), interval: interval, condition)
    }

    /// Checks `condition` every `interval` until it holds (true) or `limit` passed (false).
    public static func until(
        _ limit: Duration, interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: interval)
        }
        return try await condition()
    }
}
