import Foundation
import SubreconCore
import SubreconTestKit
import Testing

/// `docs/CONTRACT.md`'s "subrecon finance" section says what the command does: its option table is
/// `subrecon finance --help`, and its exit codes are `ExitStatus` values.
@Suite("docs/CONTRACT.md's subrecon finance matches the code")
struct FinanceContractDocTests {
    @Test("the option table is `subrecon finance --help`; the gaps' exit code is documented")
    func optionsMatchHelp() throws {
        let documented = try ContractDoc.firstCells(of: "subrecon finance")
        let help = try ContractDoc.help(packageRoot: ContractDocTests.packageRoot, command: "finance")
        let offered = ContractDoc.options(inHelp: help).subtracting(["--help", "--version"])
        #expect(!offered.isEmpty, "no option found in `subrecon finance --help`")
        #expect(Set(documented) == offered, "docs/CONTRACT.md's finance options against `subrecon finance --help`")
        #expect(ExitStatus.periodGaps.rawValue == 5)
        #expect(try ContractDoc.firstCells(of: "Exit codes").contains("5"))
        #expect(try ContractDoc.firstCells(of: "Commands").contains { $0.hasPrefix("subrecon finance --from INSTANT --to INSTANT") })
    }
}
