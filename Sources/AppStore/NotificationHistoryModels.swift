import Foundation

/// `POST /inApps/v1/notifications/history` request body (`NotificationHistoryRequest`); dates in Unix ms.
struct NotificationHistoryRequest: Encodable, Sendable {
    var startDate: Int64
    var endDate: Int64
    var notificationType: String?
    var onlyFailures: Bool?
}

/// `NotificationHistoryResponse`: at most 20 records a page; every field optional (unknown, never a default).
struct NotificationHistoryResponse: Decodable, Sendable {
    struct Item: Decodable, Sendable {
        var signedPayload: String?
    }
    var paginationToken: String?
    var hasMore: Bool?
    var notificationHistory: [Item]?
}

/// The decoded `signedPayload` of an App Store Server Notification V2 (`responseBodyV2DecodedPayload`).
struct NotificationPayload: Decodable, Sendable {
    struct NotificationData: Decodable, Sendable {
        var bundleId: String?
        var environment: String?
        var signedTransactionInfo: String?
    }
    var notificationType: String?
    var subtype: String?
    var notificationUUID: String?
    var data: NotificationData?
}
