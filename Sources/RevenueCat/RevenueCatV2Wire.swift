import Foundation
import SourceHTTP
import SubreconCore

/// A v2 customer (`GET /v2/projects/{project_id}/customers/{customer_id}`), as far as subrecon reads it: that the
/// answer is a customer, and whose. Every other field (`first_seen_at`, `last_seen_*`, `active_entitlements`,
/// `experiment`, `attributes`) may be present, null or new: it is not read. A body whose `object` is not
/// `"customer"`, or without a string `id`, is not the documented shape.
public struct RevenueCatV2Customer: Decodable, Sendable, Hashable {
    public var id: String
    public var projectID: String?
    /// `first_seen_at`, milliseconds since the epoch, when a number.
    public var firstSeenAtMS: Int64?

    enum CodingKeys: String, CodingKey {
        case object, id
        case projectID = "project_id"
        case firstSeenAtMS = "first_seen_at"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let object = try container.decode(String.self, forKey: .object)
        guard object == "customer" else {
            throw DecodingError.dataCorruptedError(
                forKey: .object, in: container, debugDescription: "object is not \"customer\": \(object.prefix(40))")
        }
        id = try container.decode(String.self, forKey: .id)
        projectID = try container.decodeIfPresent(String.self, forKey: .projectID)
        firstSeenAtMS = try? container.decodeIfPresent(Int64.self, forKey: .firstSeenAtMS)
    }
}

/// A v2 list page (`{"object": "list", "items": [...], "next_page": null, "url": "/v2/…"}`): `next_page` is absent or
/// null on the last page; items are kept as their count only (doctor's `?limit=1` read needs no more).
public struct RevenueCatV2ListPage: Decodable, Sendable, Hashable {
    public var itemCount: Int
    public var nextPage: String?

    enum CodingKeys: String, CodingKey {
        case object, items
        case nextPage = "next_page"
    }

    private struct AnyItem: Decodable {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let object = try container.decode(String.self, forKey: .object)
        guard object == "list" else {
            throw DecodingError.dataCorruptedError(
                forKey: .object, in: container, debugDescription: "object is not \"list\": \(object.prefix(40))")
        }
        itemCount = try container.decode([AnyItem].self, forKey: .items).count
        nextPage = try container.decodeIfPresent(String.self, forKey: .nextPage)
    }
}

/// RevenueCat's v2 error object: `{"object": "error", "type": "resource_missing", "message": "…", "retryable": false,
/// "doc_url": "…", "backoff_ms": 1000}` (`param` and `backoff_ms` optional). Only an `object: "error"` with a string
/// `type` is one; `backoff_ms` is read like v1's (a number or a numeric string; nil when unreadable).
public struct RevenueCatV2ErrorBody: Decodable, Sendable, Hashable {
    public var type: String
    public var message: String?
    public var retryable: Bool?
    public var docURL: String?
    public var backoffMS: Double?

    /// The `type` of a 404 for a customer that does not exist.
    public static let resourceMissing = "resource_missing"
    /// The `type` of a 403: the key lacks a permission, or belongs to another project.
    public static let authorizationError = "authorization_error"

    enum CodingKeys: String, CodingKey {
        case object, type, message, retryable
        case docURL = "doc_url"
        case backoffMS = "backoff_ms"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let object = try container.decode(String.self, forKey: .object)
        guard object == "error" else {
            throw DecodingError.dataCorruptedError(
                forKey: .object, in: container, debugDescription: "object is not \"error\": \(object.prefix(40))")
        }
        type = try container.decode(String.self, forKey: .type)
        message = try? container.decodeIfPresent(String.self, forKey: .message)
        retryable = try? container.decodeIfPresent(Bool.self, forKey: .retryable)
        docURL = try? container.decodeIfPresent(String.self, forKey: .docURL)
        if let millis = try? container.decodeIfPresent(Double.self, forKey: .backoffMS) {
            backoffMS = millis
        } else if let text = try? container.decodeIfPresent(String.self, forKey: .backoffMS) {
            backoffMS = WaitText.number(text)
        } else {
            backoffMS = nil
        }
    }
}

extension RevenueCatV2Customer {
    /// Decodes a customer body after `SourceText.sanitizedJSON` (like every RevenueCat body).
    public static func decode(body: Data) throws -> RevenueCatV2Customer {
        try JSONDecoder().decode(RevenueCatV2Customer.self, from: SourceText.sanitizedJSON(body))
    }
}

extension RevenueCatV2ListPage {
    public static func decode(body: Data) throws -> RevenueCatV2ListPage {
        try JSONDecoder().decode(RevenueCatV2ListPage.self, from: SourceText.sanitizedJSON(body))
    }
}

extension RevenueCatV2ErrorBody {
    /// Decodes an error body; nil when it is not RevenueCat's v2 error object.
    public static func decode(body: Data) -> RevenueCatV2ErrorBody? {
        try? JSONDecoder().decode(RevenueCatV2ErrorBody.self, from: SourceText.sanitizedJSON(body))
    }
}
