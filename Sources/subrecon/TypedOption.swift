import ArgumentParser
import Foundation
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts

/// A value a command option can hold, read from the option's text once; nil for text that is not one.
protocol OptionValue: Sendable {
    init?(optionText: String)
}

/// A `run` option's text and its value, read once where the command line is parsed. Reading never fails inside
/// swift-argument-parser: an option whose text is not a value must still reach `run()`, which writes the metrics
/// before its exit 64 (docs/CONTRACT.md, `--metrics-file`); `value` is then nil and `Run.usageProblem()` names the
/// option.
struct TypedOption<Value: OptionValue>: ExpressibleByArgument, Sendable {
    let text: String
    let value: Value?

    init(_ text: String) {
        self.text = text
        value = Value(optionText: text)
    }

    init?(argument: String) { self.init(argument) }

    var defaultValueDescription: String { text }
}

extension ShardSpec: OptionValue {
    init?(optionText: String) { self.init(parsing: optionText) }
}

extension CandidateQuery.Mode: OptionValue {
    init?(optionText: String) { self.init(rawValue: optionText) }
}

/// An instant given on the command line: a whole RFC 3339 instant in the years `OptionRanges` allows.
struct Instant: OptionValue {
    let date: Date

    init?(optionText: String) {
        guard let date = OptionRanges.instant(optionText) else { return nil }
        self.date = date
    }
}
