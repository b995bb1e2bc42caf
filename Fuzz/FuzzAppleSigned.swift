// Apple's notification history and its signed data under the fuzzer: 'H', and with FUZZ_JWS 'J' and 'K', of the table
// in FuzzDecoders.swift.
//
// 'H' a notification history page (`NotificationHistoryResponse`), the body also read as a decoded notification
//     payload (`responseBodyV2DecodedPayload`).
// 'J' the JWS/x5c verification path, the input split at its first two newlines into the header JSON, the payload JSON
//     and the raw signature bytes (each base64url-encoded here), so that the fuzzer reaches the certificates and
//     the signature instead of breaking base64url; 'K' the input as compact JWS text. Each is verified as a
//     transaction, as renewal info and as a notification, at a fixed time against the fuzz root below (the committed
//     corpus holds valid ones: Fuzz/corpus/jws-*). Besides "never traps": a payload believed keeps the sanitizing
//     invariants.
// JWSVerifier needs swift-crypto and swift-certificates, which only SwiftPM builds: scripts/fuzz links their objects
// from .build/debug (run `swift build` first) and defines FUZZ_JWS; without them 'J' and 'K' read the text only.
import Foundation
import SubreconCore

#if FUZZ_JWS
    import X509
#endif

/// The decoders of this file, merged into the table of FuzzDecoders.swift.
let appleSignedDecoders: [UInt8: @Sendable (Data) -> Void] = {
    var table: [UInt8: @Sendable (Data) -> Void] = [UInt8(ascii: "H"): notificationHistory]
    #if FUZZ_JWS
        table[UInt8(ascii: "J")] = jwsParts
        table[UInt8(ascii: "K")] = jwsCompact
    #endif
    return table
}()

private func notificationHistory(_ body: Data) {
    if let page = try? AppStoreJSON.decode(NotificationHistoryResponse.self, from: body) {
        check(page.paginationToken, "paginationToken")
        for item in page.notificationHistory ?? [] { check(item.signedPayload, "signedPayload") }
        if let json = try? JSONSerialization.data(withJSONObject: ["t": page.paginationToken ?? ""]) { checkJSONB(json) }
    }
    if let payload = try? AppStoreJSON.decode(NotificationPayload.self, from: body) {
        for text in [payload.notificationType, payload.subtype, payload.notificationUUID] { check(text, "notification text") }
        for text in [payload.data?.bundleId, payload.data?.environment, payload.data?.signedTransactionInfo] {
            check(text, "notification data text")
        }
    }
}

#if FUZZ_JWS
    /// The root the committed corpus is signed under (a self-signed P-256 test root: Fuzz/corpus/jws-*).
    private let fuzzRootPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBvDCCAWKgAwIBAgIBATAKBggqhkjOPQQDAjA1MRswGQYDVQQDDBJTdWJyZWNv
        biBGdXp6IFJvb3QxFjAUBgNVBAoMDXN1YnJlY29uIGZ1enowHhcNMjAwMTAxMDAw
        MDAwWhcNNDUwMTAxMDAwMDAwWjA1MRswGQYDVQQDDBJTdWJyZWNvbiBGdXp6IFJv
        b3QxFjAUBgNVBAoMDXN1YnJlY29uIGZ1enowWTATBgcqhkjOPQIBBggqhkjOPQMB
        BwNCAARu1Y8sWI9/wG74zPvmyl3+UYFjxvnhtXCy2pUb0fvw21Ny+mD8ZD5M3J7p
        zDfuDH5AFzM7PQy5bZSQzxuEg84Io2MwYTAPBgNVHRMBAf8EBTADAQH/MA4GA1Ud
        DwEB/wQEAwIBBjAdBgNVHQ4EFgQUAX+DPidVY1+HH6ZFOnbGSzBDiucwHwYDVR0j
        BBgwFoAUAX+DPidVY1+HH6ZFOnbGSzBDiucwCgYIKoZIzj0EAwIDSAAwRQIhAPYU
        B//IZ0gMmuvOhYbz0roqERJoTsUK/nLwdwFao8O0AiAJFQvfFl+uhElkAiH6nD3s
        KY1Ml7G0gUtcVIgTlxOYAw==
        -----END CERTIFICATE-----
        """

    /// The root, parsed once. Each input gets a verifier of its own (its chain cache used within the input only), so that
    /// an input replays alone exactly as it ran, and the cache's memory is gone when the input ends (no leak reported).
    private let fuzzRoot: Certificate = {
        guard let root = try? Certificate(pemEncoded: fuzzRootPEM) else { preconditionFailure("the fuzz root does not parse") }
        return root
    }()
    private let fuzzNow = Date(timeIntervalSince1970: 1_780_282_800)

    private func jwsParts(_ body: Data) {
        let parts = body.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
        let segments = (0..<3).map { index in index < parts.count ? Base64URL.encode(Data(parts[index])) : "" }
        verifyAll(segments.joined(separator: "."))
    }

    private func jwsCompact(_ body: Data) {
        verifyAll(String(decoding: body, as: UTF8.self))
    }

    /// Runs the async verifier to its end from the fuzzer's synchronous callback.
    private func verifyAll(_ jws: String) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await verifyEverything(jws)
            done.signal()
        }
        done.wait()
    }

    /// The JWS as a transaction and renewal info in both environments, and as a notification, at the fixed time.
    private func verifyEverything(_ jws: String) async {
        let verifier = JWSVerifier(rootCertificates: [fuzzRoot], bundleID: "com.example.fuzz")
        for environment in [StoreEnvironmentName.production, .sandbox] {
            if let payload = try? await verifier.verifyTransaction(jws, environment: environment, now: fuzzNow) {
                checkTransaction(payload)
            }
            if let payload = try? await verifier.verifyRenewalInfo(jws, environment: environment, now: fuzzNow) {
                check(payload.originalTransactionId, "verified renewal id")
                check(payload.signedDate, "verified renewal signedDate")
            }
        }
        if let payload = try? await verifier.verify(jws, as: NotificationPayload.self, now: fuzzNow) {
            check(payload.notificationUUID, "verified notification uuid")
            check(payload.data?.signedTransactionInfo, "verified notification transaction")
        }
    }
#endif
