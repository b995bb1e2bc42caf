import Foundation
import SourceHTTP

/// How the RevenueCat client reaches API v2 (`{base}/v2/projects/{project_id}/…`), beside the v1 key: v2 only says
/// whether a customer exists, with a read that creates nothing (docs/CONTRACT.md, "Sources and the decision").
///
/// The API key is a secret: `description` never shows it.
public struct RevenueCatV2Configuration: Sendable, CustomStringConvertible {
    /// Base URL without the `/v2` suffix (the same as v1's).
    public var baseURL: String
    /// A v2 secret key with `customer_information:customers:read`, sent as `Authorization: Bearer <key>`.
    public var apiKey: String
    /// The RevenueCat project the key belongs to (`proj…`).
    public var projectID: String
    /// The same bounds as every source (deadline, body limit, attempts, 429 waits).
    public var requestPolicy: SourceRequestPolicy

    /// The v2 permission a get-customer needs (RevenueCat's Customer Information domain).
    public static let customersReadPermission = "customer_information:customers:read"
    /// Largest body accepted: a customer or a one-item list is well under a kilobyte.
    public static let defaultMaxBodyBytes = 256 * 1024

    public init(
        baseURL: String = RevenueCatConfiguration.defaultBaseURL, apiKey: String, projectID: String,
        requestPolicy: SourceRequestPolicy = SourceRequestPolicy(maxBodyBytes: RevenueCatV2Configuration.defaultMaxBodyBytes)
    ) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.projectID = projectID
        self.requestPolicy = requestPolicy
    }

    public var description: String {
        "RevenueCatV2Configuration(baseURL: \(baseURL), apiKey: <redacted>, projectID: \(projectID), requestPolicy: \(requestPolicy))"
    }
}
