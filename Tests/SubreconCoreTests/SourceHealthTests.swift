import SubreconCore
import Testing

/// A source that answers nothing but 429/5xx/timeouts for a whole minute is declared down for the rest
/// of the run; one success before that resets it. Instants are injected: no test waits a real minute.
@Suite("Source health: a source failing for a whole minute is declared down")
struct SourceHealthTests {
    @Test("only failures for 60 s (a failure at the start and one a minute later) declare the source down at the later one")
    func downAfterAMinute() {
        var health = SourceHealth()
        #expect(health.record(.failure, status: 503, at: .seconds(10)) == .up)
        #expect(health.record(.failure, status: 503, at: .seconds(40)) == .up)
        #expect(health.record(.failure, status: 503, at: .milliseconds(69_999)) == .up)
        #expect(health.record(.failure, status: 429, at: .seconds(70)) == .down(since: .seconds(70)))
        #expect(health.isDown)
        #expect(health.reason == "no answer but 429/5xx/timeouts for 60 s (4 failures, the last HTTP 429)", "\(health.reason)")
    }

    @Test("one success resets the minute: failures must fill a whole minute after it")
    func successResets() {
        var health = SourceHealth()
        health.record(.failure, at: .seconds(0))
        health.record(.failure, at: .seconds(59))
        health.record(.success, at: .seconds(59.5))
        #expect(health.record(.failure, at: .seconds(61)) == .up, "the stretch started again at 61 s")
        #expect(health.record(.failure, at: .seconds(120)) == .up)
        #expect(health.record(.failure, at: .seconds(121)) == .down(since: .seconds(121)))
        #expect(health.reason.contains("the last without an HTTP answer"))
    }

    @Test("successes alone, or failures spread over less than the window, never declare it down")
    func staysUp() {
        var health = SourceHealth(window: .seconds(60))
        for second in 0..<300 {
            let outcome: SourceHealth.Outcome = second % 30 == 29 ? .success : .failure
            #expect(health.record(outcome, at: .seconds(second)) == .up)
        }
        var quiet = SourceHealth()
        for second in stride(from: 0, to: 600, by: 5) { #expect(quiet.record(.success, at: .seconds(second)) == .up) }
    }

    @Test("down is final for the run: a late success (a request already in flight) does not bring it back")
    func downIsFinal() {
        var health = SourceHealth(window: .seconds(1))
        health.record(.failure, at: .zero)
        health.record(.failure, at: .seconds(1))
        #expect(health.record(.success, at: .seconds(2)) == .down(since: .seconds(1)))
    }

    @Test("429, 5xx and no answer are failures; every other status is the source answering (404 included)")
    func outcomes() {
        for status in [429, 500, 502, 503, 599] { #expect(SourceHealth.outcome(status: status) == .failure) }
        #expect(SourceHealth.outcome(status: nil) == .failure)
        for status in [200, 201, 204, 400, 401, 404, 410, 499, 600] { #expect(SourceHealth.outcome(status: status) == .success) }
    }

    @Test("two 429s a millisecond apart are a millisecond of failures, not a minute, whatever wait they ask for")
    func burstIsNoMinute() {
        var health = SourceHealth()
        #expect(health.record(.failure, status: 429, at: .seconds(5)) == .up)
        #expect(health.record(.failure, status: 429, at: .milliseconds(5_001)) == .up)
        #expect(health.failingSpan == .milliseconds(1))
        for instant in 0..<14 { health.record(.failure, status: 429, at: .milliseconds(5_002 + Int64(instant))) }
        #expect(!health.isDown, "16 users in flight, each told to wait a minute")
        #expect(health.failures == 16)
        #expect(health.record(.success, at: .seconds(65)) == .up, "asked again after the pause, it answered")
        #expect(health.failingSpan == nil && health.failures == 0)
    }

    @Test("the span runs from the stretch's earliest failure to its latest, in whatever order workers record them")
    func spanOutOfOrder() {
        var health = SourceHealth()
        health.record(.failure, at: .seconds(30))
        health.record(.failure, at: .seconds(10))  // recorded late: an attempt that began earlier
        #expect(health.failingSince == .seconds(10) && health.lastFailure == .seconds(30))
        #expect(health.record(.failure, at: .milliseconds(69_999)) == .up)
        #expect(health.record(.failure, at: .seconds(70)) == .down(since: .seconds(70)))
    }

    @Test("a minute of only failures declares it down; a success between them resets the minute")
    func minuteOfFailures() {
        var failing = SourceHealth()
        failing.record(.failure, status: 429, at: .zero)
        #expect(failing.record(.failure, status: 429, at: .seconds(60)) == .down(since: .seconds(60)), "paused a minute, failed again")
        var answered = SourceHealth()
        answered.record(.failure, status: 429, at: .zero)
        answered.record(.success, at: .seconds(30))
        #expect(answered.record(.failure, status: 429, at: .seconds(60)) == .up, "the stretch began again at 60 s")
        #expect(answered.failingSpan == .zero)
    }
}
