import SwiftASN1
import X509

/// Apple's chain rules for App Store signed data (apple.md §3.3): exactly leaf, intermediate and root;
/// the leaf carries the receipt-signing OID and the intermediate the WWDR OID.
struct AppleOIDPolicy: VerifierPolicy {
    /// 1.2.840.113635.100.6.11.1: Mac App Store and iTunes Store receipt signing.
    static let receiptSigningOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
    /// 1.2.840.113635.100.6.2.1: Apple Worldwide Developer Relations intermediate.
    static let wwdrIntermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "chain has \(chain.count) certificates, Apple's has 3")
        }
        guard chain[0].extensions[oid: Self.receiptSigningOID] != nil else {
            return .failsToMeetPolicy(reason: "leaf lacks Apple's receipt-signing OID 1.2.840.113635.100.6.11.1")
        }
        guard chain[1].extensions[oid: Self.wwdrIntermediateOID] != nil else {
            return .failsToMeetPolicy(reason: "intermediate lacks Apple's WWDR OID 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}
