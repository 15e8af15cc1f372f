import Foundation
import WalletVaultCLI

// Thin by design: everything testable lives in WalletVaultCLI.
exit(await WalletVaultTool.run(Array(CommandLine.arguments.dropFirst())))
