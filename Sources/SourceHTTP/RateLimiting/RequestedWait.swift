import Foundation

/// How long a source asked to be left alone (a 429's `Retry-After` header or RevenueCat's `backoff_ms`), judged
/// against the longest wait the job accepts. Pure, and never traps whatever the source sent.
///
/// It does not decide what to do: the clients wait `.wait`, give the user up for tonight on `.tooLong` (a
/// `fetch_error` saying the source asked for too long a wait), and fall back to their own backoff on `.unspecified`.
public enum RequestedWait: Sendable, Hashable {
    /// The source named no usable wait (absent, empty, not a number, NaN, a negative delay).
    case unspecified
    /// Wait this long: between zero and the cap.
    case wait(Duration)
    /// The source asked for more than the cap; `seconds` is what it asked for (may be `+infinity`).
    case tooLong(seconds: Double)

    /// A delay of `seconds` (any Double) against `cap`.
    public static func seconds(_ seconds: Double, cap: Duration) -> RequestedWait {
        guard !seconds.isNaN, seconds >= 0 else { return .unspecified }
        guard seconds <= cap.secondsValue else { return .tooLong(seconds: seconds) }
        // Below the cap, so finite; the clamp keeps the conversion in range whatever the cap is.
        let nanoseconds = Swift.min((seconds * 1e9).rounded(), 9.0e18)
        return .wait(.nanoseconds(Int64(nanoseconds)))
    }

    /// A delay of `milliseconds` (any Double) against `cap`.
    public static func milliseconds(_ milliseconds: Double, cap: Duration) -> RequestedWait {
        seconds(milliseconds / 1000, cap: cap)
    }

    /// Quiet until the absolute instant `until`; an instant already past is a wait of zero.
    public static func until(_ until: Date, now: Date, cap: Duration) -> RequestedWait {
        let delta = until.timeIntervalSince(now)
        guard !delta.isNaN else { return .unspecified }
        return seconds(Swift.max(delta, 0), cap: cap)
    }

    /// Operator text for a `.tooLong` wait: "asked to wait 3600 s, more than the 60 s cap" (or "an unbounded
    /// wait" for infinity).
    public static func tooLongDescription(seconds: Double, cap: Duration) -> String {
        let asked = seconds.isFinite ? "to wait \(format(seconds)) s" : "for an unbounded wait"
        return "asked \(asked), more than the \(format(cap.secondsValue)) s cap"
    }

    private static func format(_ seconds: Double) -> String {
        (10..<1e9).contains(seconds) ? String(format: "%.0f", seconds) : String(format: "%.3g", seconds)
    }

    /// Quiet until `milliseconds` after the Unix epoch (Apple's `Retry-After`); any Double.
    public static func untilUnixMilliseconds(_ milliseconds: Double, now: Date, cap: Duration) -> RequestedWait {
        guard !milliseconds.isNaN else { return .unspecified }
        let nowMilliseconds = now.timeIntervalSince1970 * 1000
        return self.milliseconds(Swift.max(milliseconds - nowMilliseconds, 0), cap: cap)
    }
}

/// The 429 answers of one lookup (a request and its retries): how long to wait after each, bounded by time rather
/// than by a number of attempts (429 is flow control, not failure). Pure; the clients sleep what it says.
public struct RateLimitChain: Sendable, Hashable {
    /// What to do after one more 429.
    public enum Step: Sendable, Hashable {
        /// Wait this long (and tell the shared limiter), then ask again.
        case wait(Duration)
        /// The source asked for more than the cap: give the user up for this run.
        case tooLong(seconds: Double)
        /// The waits of this lookup would exceed the budget: give the user up for this run.
        case budgetSpent
    }

    /// Total wait this lookup may spend on 429s.
    public let budget: Duration
    /// No 429 is retried sooner than this (a source answering "wait 0" must not get a hot loop).
    public let minimumWait: Duration
    /// 429 answers seen so far.
    public private(set) var answers = 0
    /// Waits granted so far.
    public private(set) var waited = Duration.zero

    public init(budget: Duration, minimumWait: Duration = .milliseconds(50)) {
        self.budget = budget
        self.minimumWait = minimumWait
    }

    /// One more 429 that asked for `asked`; `ownBackoff(n)` is the caller's backoff after the n-th 429 when the
    /// source named no usable wait.
    public mutating func next(_ asked: RequestedWait, ownBackoff: (Int) -> Duration) -> Step {
        answers += 1
        let wait: Duration
        switch asked {
        case .tooLong(let seconds): return .tooLong(seconds: seconds)
        case .wait(let duration): wait = Swift.max(duration, minimumWait)
        case .unspecified: wait = Swift.max(ownBackoff(answers), minimumWait)
        }
        guard waited + wait <= budget else { return .budgetSpent }
        waited += wait
        return .wait(wait)
    }
}

/// Reading the numbers and dates of untrusted header and body text without trapping.
public enum WaitText {
    /// A decimal number: optional sign, digits with an optional fraction and exponent (`5`, `1.5`, `-3`, `1e19`,
    /// `.5`), or `inf` / `infinity` (any case, optional sign); surrounding spaces and tabs are ignored. Values too
    /// large for a Double are ±infinity. Nil for anything else: empty text, NaN, hexadecimal, dates, trailing junk.
    public static func number(_ text: some StringProtocol) -> Double? {
        let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        guard !trimmed.isEmpty, trimmed.utf8.count <= 4096 else { return nil }
        var body = Substring(trimmed)
        var negative = false
        if let first = body.first, first == "+" || first == "-" {
            negative = first == "-"
            body = body.dropFirst()
        }
        let lowered = body.lowercased()
        if lowered == "inf" || lowered == "infinity" { return negative ? -.infinity : .infinity }
        guard isDecimal(body.utf8) else { return nil }
        guard let value = Double(String(body)) else { return nil }
        return negative ? -value : value
    }

    /// `digits [. digits] [e [+-] digits]` or `. digits [e ...]`: at least one digit in the mantissa.
    private static func isDecimal(_ bytes: Substring.UTF8View) -> Bool {
        var index = bytes.startIndex
        func digits() -> Int {
            var count = 0
            while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                index = bytes.index(after: index)
                count += 1
            }
            return count
        }
        var mantissa = digits()
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: ".") {
            index = bytes.index(after: index)
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index = bytes.index(after: index)
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index = bytes.index(after: index)
            }
            guard digits() > 0 else { return false }
        }
        return index == bytes.endIndex
    }

    /// An HTTP-date (RFC 9110 §5.6.7): IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, the obsolete RFC 850 form
    /// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`; years 1970...9999. Nil otherwise.
    public static func httpDate(_ text: some StringProtocol) -> Date? {
        guard text.utf8.count <= 64 else { return nil }
        let separators = CharacterSet(charactersIn: " ,-:\t")
        let tokens = text.components(separatedBy: separators).filter { !$0.isEmpty }
        guard tokens.count >= 7, let weekday = tokens.first, weekdays.contains(weekday.prefix(3).lowercased()) else {
            return nil
        }
        var day: Int?
        var month: Int?
        var year: Int?
        var clock: [Int] = []
        if let monthIndex = months.firstIndex(of: tokens[1].lowercased()), tokens.count == 7 {
            // asctime: weekday month day hh mm ss yyyy
            month = monthIndex + 1
            day = Int(tokens[2])
            clock = tokens[3...5].compactMap { Int($0) }
            year = Int(tokens[6])
        } else if tokens.count == 8, tokens[7] == "GMT", let monthIndex = months.firstIndex(of: tokens[2].lowercased()) {
            // IMF-fixdate or RFC 850: weekday day month year hh mm ss GMT
            month = monthIndex + 1
            day = Int(tokens[1])
            clock = tokens[4...6].compactMap { Int($0) }
            if tokens[3].count == 2, let short = Int(tokens[3]) {
                year = short >= 70 ? 1900 + short : 2000 + short
            } else {
                year = Int(tokens[3])
            }
        }
        guard let day, let month, let year, clock.count == 3, (1970...9999).contains(year), (1...31).contains(day),
            (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day, hour: clock[0], minute: clock[1], second: clock[2])
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day || clock[2] == 60
        else { return nil }
        return date
    }

    private static let weekdays: Set<String> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
}

extension Duration {
    /// The duration in (fractional) seconds; finite for every Duration.
    fileprivate var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
