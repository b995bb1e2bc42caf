import Foundation

enum Fixtures {
    /// A constructed example of a RevenueCat `GET /v1/subscribers/{id}` answer (the wire format the simulator speaks).
    static let referenceExample = #"""
        {
          "request_date": "2026-03-01T02:00:05Z",
          "request_date_ms": 1772330405000,
          "subscriber": {
            "original_app_user_id": "8f0c6a1e-4b7e-4c1e-9b1a-2f6f3c9d7e21",
            "original_application_version": "1.0",
            "original_purchase_date": "2024-11-30T18:01:40Z",
            "first_seen": "2024-11-30T18:01:57Z",
            "last_seen": "2026-02-27T09:14:33Z",
            "management_url": "https://apps.apple.com/account/subscriptions",
            "entitlements": {
              "pro": {
                "expires_date": "2026-03-14T18:02:11Z",
                "grace_period_expires_date": "2026-03-14T18:02:11Z",
                "product_identifier": "pro_monthly",
                "purchase_date": "2026-01-28T18:02:11Z"
              },
              "extras": {
                "expires_date": null,
                "grace_period_expires_date": null,
                "product_identifier": "extras_lifetime",
                "purchase_date": "2025-05-01T10:00:00Z"
              }
            },
            "subscriptions": {
              "pro_monthly": {
                "auto_resume_date": null,
                "billing_issues_detected_at": "2026-02-28T18:05:00Z",
                "display_name": "Pro Monthly",
                "expires_date": "2026-02-28T18:02:11Z",
                "grace_period_expires_date": "2026-03-14T18:02:11Z",
                "is_sandbox": false,
                "original_purchase_date": "2024-11-30T18:02:11Z",
                "ownership_type": "PURCHASED",
                "period_type": "normal",
                "price": { "amount": 9.99, "currency": "USD" },
                "purchase_date": "2026-01-28T18:02:11Z",
                "refunded_at": null,
                "store": "app_store",
                "store_transaction_id": "2000000812345678",
                "unsubscribe_detected_at": null
              }
            },
            "non_subscriptions": {
              "extras_lifetime": [
                {
                  "id": "cadba0c81b",
                  "display_name": "Extras (lifetime)",
                  "is_sandbox": false,
                  "price": { "amount": 19.99, "currency": "USD" },
                  "purchase_date": "2025-05-01T10:00:00Z",
                  "store": "play_store",
                  "store_transaction_id": "GPA.3345-1234-5678-90123"
                }
              ]
            },
            "other_purchases": {},
            "subscriber_attributes": {
              "$email": { "value": "user@example.com", "updated_at_ms": 1740000000000 }
            }
          }
        }
        """#

    /// A subscriber with one subscription whose fields are given as JSON text (dates with fractional seconds).
    static func subscriber(subscription: String, productID: String = "p1", entitlements: String = "{}") -> String {
        """
        {"request_date": "2026-03-01T02:00:05.250Z", "subscriber": {"original_app_user_id": "u1",
         "first_seen": "2025-01-01T00:00:00.000Z", "entitlements": \(entitlements),
         "subscriptions": {"\(productID)": \(subscription)}, "non_subscriptions": {}}}
        """
    }

    static func date(_ text: String) -> Date {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: text.contains("."))
        return try! style.parse(text)
    }
}
