import Foundation
import Synchronization
import WalletVault

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Obtains OIDC access tokens for a profile: mints one at the dev server's `/dev-oidc/token`, or runs the token command.
///
/// The SDK turns any failure here into "unauthorized"; the precise reason is kept in `lastFailure` so the
/// command can say what actually went wrong (server down, command failed, token refused).
final class TokenSource: Sendable {
    private let profile: Profile
    private let failure = Mutex<CLIError?>(nil)

    init(profile: Profile) {
        self.profile = profile
    }

    /// Why the last attempt failed, if it did.
    var lastFailure: CLIError? { failure.withLock { $0 } }

    /// A fresh access token.
    func accessToken() async throws -> String {
        do {
            let token = profile.auth.kind == "dev" ? try await devToken() : try runCommand()
            failure.withLock { $0 = nil }
            return token
        } catch let error as CLIError {
            failure.withLock { $0 = error }
            throw error
        }
    }

    private func devToken() async throws -> String {
        guard let base = profile.serverURL, let sub = profile.auth.sub, let azp = profile.auth.azp else {
            throw CLIError(.notAuthorized, "the profile's development login is incomplete: run `walletvault login --dev` again")
        }
        var request = URLRequest(url: base.appendingPathComponent("dev-oidc/token"))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("sub=\(Self.formEncode(sub))&azp=\(Self.formEncode(azp))".utf8)
        request.timeoutInterval = 15
        let data: Data
        let response: URLResponse
        do { (data, response) = try await URLSession.shared.data(for: request) } catch {
            throw CLIError(.server, "the server at \(profile.server) cannot be reached: check it is running (`walletvault-server --dev`)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            throw CLIError(
                .notAuthorized,
                status == 404
                    ? "the server at \(profile.server) has no development issuer: it is not a --dev server; log in with --token-command"
                    : "the development issuer answered \(status): check --sub and --azp and log in again")
        }
        struct Issued: Decodable { let access_token: String }
        guard let issued = try? JSONDecoder().decode(Issued.self, from: data) else {
            throw CLIError(.server, "the development issuer's answer has no access_token: check the server URL")
        }
        return issued.access_token
    }

    private func runCommand() throws -> String {
        guard let command = profile.auth.command else {
            throw CLIError(.notAuthorized, "the profile has no token command: run `walletvault login` again")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        // Standard input and error stay the user's, so the command can prompt (a device-code flow, a password manager).
        do { try process.run() } catch {
            throw CLIError(.notAuthorized, "cannot run the token command: check `/bin/sh` and log in again")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIError(
                .notAuthorized,
                "the token command failed (exit \(process.terminationStatus)): fix it or run "
                    + "`walletvault login --token-command` again")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isWhitespace) else {
            throw CLIError(.notAuthorized, "the token command printed no single token: it must print only the access token")
        }
        return token
    }

    private static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
