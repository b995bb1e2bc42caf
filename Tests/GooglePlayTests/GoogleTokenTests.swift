import Crypto
import Foundation
import GooglePlay
import StoreSimulator
import SubreconCore
import Testing
import _CryptoExtras

@Suite("Google OAuth: assertion and access token cache")
struct GoogleTokenTests {
    @Test("the assertion is an RS256 JWT with Google's claims, and its signature verifies with the public key")
    func assertionShape() throws {
        let signer = try GoogleJWTSigner(serviceAccount: try GoogleServiceAccount(json: TestKeys.account.json))
        let now = Date(timeIntervalSince1970: 1_780_000_000.7)
        let jwt = try signer.assertion(now: now)
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try JSONDecoder().decode(GoogleJWTSigner.Header.self, from: try #require(Base64URL.decode(parts[0])))
        #expect(header.alg == "RS256" && header.typ == "JWT" && header.kid == TestKeys.account.keyID)
        let claims = try JSONDecoder().decode(GoogleJWTSigner.Claims.self, from: try #require(Base64URL.decode(parts[1])))
        #expect(claims.iss == TestKeys.account.clientEmail)
        #expect(claims.scope == "https://www.googleapis.com/auth/androidpublisher")
        #expect(claims.aud == "https://oauth2.googleapis.com/token")
        #expect(claims.iat == 1_780_000_000)
        #expect(claims.exp == claims.iat + 3600)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        let input = Data((parts[0] + "." + parts[1]).utf8)
        #expect(TestKeys.account.publicKey.isValidSignature(signature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5))
        // Another key does not verify it: the test can fail.
        let other = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        #expect(!other.publicKey.isValidSignature(signature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5))
    }

    static let windows: [(Int64?, Double)] = [
        (nil, 0), (0, 0), (30, 0), (61, 1), (3599, 3539), (3600, 3540), (86_400, 3540), (.max, 3540), (-5, 0),
    ]

    @Test("expires_in is saturated and capped at an hour, a minute's margin kept", arguments: windows)
    func reuseWindow(expiresIn: Int64?, reuse: Double) {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(GoogleAccessToken.reuseUntil(obtained: now, expiresIn: expiresIn).timeIntervalSince(now) == reuse)
    }

    @Test("expires_in is read from a number or digits, never trapping on huge or hostile values")
    func expiresInParse() throws {
        let cases: [(String, Int64?)] = [
            (#"{"access_token":"a","expires_in":3599}"#, 3599), (#"{"access_token":"a","expires_in":"3599"}"#, 3599),
            (#"{"access_token":"a","expires_in":1e300}"#, .max), (#"{"access_token":"a","expires_in":-7}"#, 0),
            (#"{"access_token":"a","expires_in":"soon"}"#, nil), (#"{"access_token":"a"}"#, nil),
        ]
        for (body, expected) in cases {
            #expect(GoogleJSON.token(Data(body.utf8))?.expiresIn == expected)
        }
    }

    actor FetchCounter {
        var count = 0
        func next() -> Int {
            count += 1
            return count
        }
    }

    @Test("concurrent callers share one refresh; the token is reused until shortly before it expires")
    func singleRefresh() async throws {
        let counter = FetchCounter()
        let clock = TestClock()
        let tokens = GoogleAccessTokens(now: { clock.now }) { now in
            let n = await counter.next()
            try await Task.sleep(for: .milliseconds(100))
            return GoogleAccessToken(value: "token-\(n)", reuseUntil: GoogleAccessToken.reuseUntil(obtained: now, expiresIn: 3600))
        }
        let values = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await tokens.token().value } }
            var all: [String] = []
            for try await value in group { all.append(value) }
            return all
        }
        #expect(Set(values) == ["token-1"])
        #expect(await counter.count == 1)
        clock.advance(3000)
        #expect(try await tokens.token().value == "token-1")
        clock.advance(600)  // past 3540 s: refreshed
        #expect(try await tokens.token().value == "token-2")
        await tokens.invalidate("token-1")  // an older token: the current one stays
        #expect(try await tokens.token().value == "token-2")
        await tokens.invalidate("token-2")
        #expect(try await tokens.token().value == "token-3")
        #expect(await tokens.refreshes == 3)
    }

    @Test("a failed refresh is not cached: the next caller tries again")
    func failedRefresh() async throws {
        let counter = FetchCounter()
        let tokens = GoogleAccessTokens { now in
            if await counter.next() == 1 { throw GoogleTokenError("HTTP 500") }
            return GoogleAccessToken(value: "ok", reuseUntil: now.addingTimeInterval(100))
        }
        await #expect(throws: GoogleTokenError.self) { try await tokens.token() }
        #expect(try await tokens.token().value == "ok")
    }
}

/// A settable wall clock.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_780_000_000)
    var now: Date { lock.withLock { current } }
    func advance(_ seconds: TimeInterval) { lock.withLock { current = current.addingTimeInterval(seconds) } }
}
