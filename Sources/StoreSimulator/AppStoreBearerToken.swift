import Crypto
import Foundation

/// Checks the ES256 bearer token of an App Store Server API request, the way Apple would (apple.md §2).
enum AppStoreBearerToken {
    static func check(
        _ authorization: String?, key: P256.Signing.PublicKey, keyID: String, issuerID: String, bundleID: String, now: Date
    ) -> AppStoreRecordedToken {
        var recorded = AppStoreRecordedToken(header: [:], accepted: false)
        guard let authorization, authorization.hasPrefix("Bearer ") else { return recorded }
        let parts = authorization.dropFirst("Bearer ".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = decode(parts[0]), let claimsData = decode(parts[1]),
            let signatureData = decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return recorded }
        recorded.header = header.compactMapValues { $0 as? String }
        recorded.issuer = claims["iss"] as? String
        recorded.audience = claims["aud"] as? String
        recorded.bundleID = claims["bid"] as? String
        recorded.issuedAt = (claims["iat"] as? NSNumber)?.intValue
        recorded.expiresAt = (claims["exp"] as? NSNumber)?.intValue
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return recorded }
        let nowSeconds = Int(now.timeIntervalSince1970)
        guard recorded.header["alg"] == "ES256", recorded.header["kid"] == keyID, recorded.issuer == issuerID,
            recorded.audience == "appstoreconnect-v1", recorded.bundleID == bundleID,
            let issuedAt = recorded.issuedAt, let expiresAt = recorded.expiresAt,
            expiresAt > nowSeconds, issuedAt <= nowSeconds + 60, expiresAt - issuedAt <= 3600
        else { return recorded }
        recorded.accepted = true
        return recorded
    }

    private static func decode(_ segment: Substring) -> Data? {
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = base64.count % 4
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64)
    }
}
