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

    @Test("a wait that would complete the minute (a 429 with Retry-After: 59 after a failure) declares it down before the wait")
    func waitCompletingTheWindow() {
        var health = SourceHealth()
        let fresh = health.declareDown(ifWaiting: .seconds(59), at: .seconds(0))
        #expect(!fresh, "nothing failed yet: the wait goes ahead")
        health.record(.failure, status: 429, at: .seconds(0))
        let once = health.declareDown(ifWaiting: .seconds(59), at: .seconds(0))
        #expect(!once, "one failure and a 59 s wait is not a minute")
        health.record(.failure, status: 429, at: .seconds(59))
        let twice = health.declareDown(ifWaiting: .seconds(59), at: .seconds(59))
        #expect(twice, "59 s failing and 59 s more to wait")
        #expect(health.state == .down(since: .seconds(59)))
        var recovered = SourceHealth()
        recovered.record(.failure, status: 429, at: .seconds(0))
        recovered.record(.success, at: .seconds(30))
        let answered = recovered.declareDown(ifWaiting: .seconds(120), at: .seconds(31))
        #expect(!answered, "a source that answered is not failing")
        var single = SourceHealth()
        single.record(.failure, status: 429, at: .seconds(0))
        let whole = single.declareDown(ifWaiting: .seconds(60), at: .seconds(0))
        #expect(!whole, "one 429 asking for the whole minute is waited out, not a minute of failures")
        let longer = single.declareDown(ifWaiting: .seconds(600), at: .seconds(0))
        #expect(!longer, "nor one asking for ten minutes: the wait's own cap bounds it")
    }
}
