import Testing
import WalletVault

/// Runs `body` and records an issue unless it throws a `SyncError` with `code`.
public func requireError(_ code: SyncError.Code, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code)")
    } catch let error as SyncError {
        #expect(error.code == code, "\(error)")
    } catch {
        Issue.record("unexpected \(error)")
    }
}
