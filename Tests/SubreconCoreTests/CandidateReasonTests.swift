import Foundation
import SubreconCore
import Testing

@Suite("Candidate reasons: the rules', the feeds' (declared by their adapters), and their order")
struct CandidateReasonTests {
    @Test("rules first, then feeds by name, then the sweep, --users-file and backfill")
    func order() throws {
        let google = CandidateReason.feed("google_voided")
        let apple = CandidateReason.feed("apple_notification")
        let shuffled: [CandidateReason] = [.backfill, google, .sweep, .lapsed, apple, .usersFile, .expired, .billingIssue]
        #expect(
            shuffled.sorted().map(\.rawValue) == [
                "expired", "billing_issue", "lapsed", "apple_notification", "google_voided", "sweep", "users_file", "backfill",
            ])
        #expect(google.isFeed && !CandidateReason.sweep.isFeed && !CandidateReason.expired.isFeed)
    }

    @Test(
        "a stored reason is read only when it is a plain name",
        arguments: ["", "Expired", "a b", "x;drop", "é", String(repeating: "a", count: 65), "a\r\nb"])
    func rejected(text: String) {
        #expect(CandidateReason(rawValue: text) == nil)
    }

    @Test("stored reasons round-trip as their names")
    func codable() throws {
        let reasons: [CandidateReason] = [.expired, .feed("stripe_event"), .sweep]
        let data = try JSONEncoder().encode(reasons)
        #expect(String(decoding: data, as: UTF8.self) == #"["expired","stripe_event","sweep"]"#)
        #expect(try JSONDecoder().decode([CandidateReason].self, from: data) == reasons)
    }
}
