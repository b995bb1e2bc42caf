import AsyncHTTPClient
import Foundation
import GooglePlay
import Logging
import SourceHTTP
import StoreSimulator
import SubreconCore
import Testing

/// `subrecon doctor`'s Google Play read (docs/CONTRACT.md, "subrecon doctor") against the simulator, which answers a
/// service account Play Console has not granted with Google's own bodies (`setAccessDenied`).
@Suite("The Google Play doctor read")
struct GoogleCredentialCheckTests {
    @Test("a granted service account: one access token, one voided purchases read (type=1, maxResults=1) that proves it")
    func granted() async throws {
        try await PlayLoopback.run { loop in
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .holds, "\(check)")
            #expect(check.subject == "google_play")
            #expect(check.text.contains(TestKeys.account.clientEmail) && check.text.contains("financial data"))
            #expect(await loop.simulator.voidedRequestQueries() == [["type": "1", "maxResults": "1"]])
            let counters = await loop.simulator.counters()
            #expect(counters.tokensIssued == 1 && counters.apiRequests == 0)
        }
    }

    @Test("Play Console has not granted the account: Google's 401 permissionDenied names the grant to give")
    func permissionDenied() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setAccessDenied(.permissionDenied)
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(check.text.contains("answered HTTP 401 (permissionDenied)"))
            #expect(check.text.contains("not granted this app in Play Console") && check.text.contains("View financial data"))
            #expect(await loop.simulator.counters().tokensIssued == 1, "a fresh token is not the cause: not refreshed")
        }
    }

    @Test("an unlinked Cloud project and a disabled API are named from Google's 403 reasons")
    func projectProblems() async throws {
        let cases: [(GooglePlayAccessDenial, String)] = [
            (.projectNotLinked, "HTTP 403 (projectNotLinked): the service account's Google Cloud project is not linked"),
            (.apiDisabled, "HTTP 403 (accessNotConfigured): the Google Play Android Developer API is not enabled"),
        ]
        for (denial, expected) in cases {
            try await PlayLoopback.run { loop in
                await loop.simulator.setAccessDenied(denial)
                let check = await loop.client.credentialCheck()
                #expect(check.outcome == .misconfigured, "\(check)")
                #expect(check.text.contains(expected), "\(check.text)")
            }
        }
    }

    @Test("a key that is not the account's: the token endpoint's invalid_grant is a configuration problem; the API is not asked")
    func wrongKey() async throws {
        let other = try GoogleTestServiceAccount.generate(tokenURI: "https://oauth2.googleapis.com/token")
        try await PlayLoopback.run(signingKeyPEM: other.privateKeyPEM) { loop in
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(check.text.contains("refused the service account") && check.text.contains("HTTP 400, invalid_grant"))
            #expect(check.text.contains("GOOGLE_PLAY_SERVICE_ACCOUNT"))
            #expect(!check.text.contains("PRIVATE KEY") && !check.text.contains("eyJ"), "no key, no assertion")
            #expect(await loop.simulator.voidedRequestQueries().isEmpty)
        }
    }

    @Test("another app's package: Google's applicationNotFound names GOOGLE_PLAY_PACKAGE_NAME")
    func unknownPackage() async throws {
        try await PlayLoopback.run(package: "com.example.not.ours") { loop in
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(check.text.contains("HTTP 404 (applicationNotFound)") && check.text.contains("GOOGLE_PLAY_PACKAGE_NAME"))
        }
    }

    @Test("a 401 without Google's error body is said as it came (no cause guessed)")
    func bareRefusal() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setVoidedFault(.raw(status: 401, headers: [:], body: Data()))
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(check.text.contains("answered HTTP 401 without Google's error body: not an answer that proves"))
        }
    }

    @Test("Google down (503 from the token endpoint on): unreachable after the retries, not a key problem")
    func down() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setDown(status: 503)
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .unreachable, "\(check)")
            #expect(check.text.hasPrefix("OAuth token endpoint: no answer"))
        }
    }

    @Test("the API failing after a token was issued (500 every time): unreachable")
    func apiFailing() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setVoidedFault(.status(500))
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .unreachable, "\(check)")
            #expect(check.text.contains("no answer about the key") && check.text.contains("3 attempts"))
        }
    }
}
