import Foundation
import WalletVault

/// `walletvault pair request` and `pair confirm CODE` (new device), `walletvault pair approve REQUEST` (a device that
/// has the vault): the request's digits authenticate the new device to the approver, the confirmation code the
/// vault to the new device.
enum PairCommand {
    static let request = CommandSpec(
        name: "pair request",
        usage: ["pair request [--wait] [--timeout SECONDS]"],
        summary: "New device: print a pairing request and its short authentication string.",
        details: """
            Creates this device's key if needed and prints the request (`wvpair1.…`, public key and label only) and
            twenty digits (64 bits of the key's hash: no one who carries the request can make a key with the same
            digits). Give the request to a device that has the vault and check it shows the same digits; it then
            shows a confirmation code to type here with `walletvault pair confirm CODE`.
            --wait then checks every 2 s until the approval arrives and asks for the confirmation code at a terminal
            (--timeout, default 300).
            Example: walletvault pair request --wait
            """,
        arguments: .init(valueOptions: ["--timeout"], flags: ["--wait"]),
        run: runRequest)

    static let approve = CommandSpec(
        name: "pair approve",
        usage: ["pair approve REQUEST [--sas DIGITS | --yes]"],
        summary: "Existing device: show the request's short authentication string, confirm, and enroll the new device.",
        details: """
            REQUEST is the text `pair request` printed (`-` reads it from standard input). At a terminal you are asked
            whether the new device shows the same twenty digits. Elsewhere pass --sas "0604 0512 8232 3547 2833" as read from the new
            device (compared here), or --yes to skip the comparison. A mismatch refuses (exit 1): the request may have
            been swapped on its way.
            Example: walletvault pair approve wvpair1.BF3x…
            """,
        arguments: .init(valueOptions: ["--sas"], flags: ["--yes"]),
        run: runApprove)

    static let confirm = CommandSpec(
        name: "pair confirm",
        usage: ["pair confirm CODE"],
        summary: "New device: check the approving device's confirmation code, then restore the vault.",
        details: """
            CODE is the six digits `pair approve` printed on the approving device; read it off that screen, never
            send it through the server. The vault the server now holds is opened without keeping anything; only if
            it gives the same code is it accepted and restored here. A different code stores nothing (exit 6): type
            it again; after 3 wrong codes the request is void and pairing starts again with a new one. If the code
            was typed right and still differs, remove the entry just approved on the approving device
            (`walletvault revoke`): it may be an impostor's.
            Example: walletvault pair confirm "483 120"
            """,
        arguments: .init(),
        run: runConfirm)

    static func runRequest(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "pair request")
        let session = try context.session()
        // A member that must confirm the vault again (it has no anchor for it yet) pairs like a new device.
        if context.home.holdsVault {
            let mustConfirm: Bool
            do {
                _ = try await session.engine.sync()
                mustConfirm = false
            } catch  where error.code == .confirmationRequired {
                mustConfirm = true
            } catch {
                throw session.translate(error)
            }
            guard mustConfirm else {
                throw CLIError(.vaultState, "this device already holds the vault: approve other devices with `walletvault pair approve`")
            }
            context.terminal.note("walletvault: note: this device has to confirm the vault again; pairing it as a new device")
        }
        // Pairing joins an existing vault; on an account without one the request could never be approved.
        guard try await session.loadBlob() != nil else {
            throw CLIError(
                .vaultState,
                "no vault is stored for this account yet: run `walletvault init` on your first device, "
                    + "then pair the others to it")
        }
        let request: PairingRequest
        do { request = try await session.engine.pairingRequest() } catch { throw session.translate(error) }
        let terminal = context.terminal
        terminal.line("Pairing request for \"\(session.profile.label)\" (no secret in it; copy it to a device that has the vault):")
        terminal.line("")
        terminal.line(request.encoded)
        terminal.line("")
        terminal.line("Short authentication string: \(request.shortAuthenticationString)")
        terminal.line(
            "There run `walletvault pair approve REQUEST` and check it shows the same digits; then "
                + "`walletvault pair confirm CODE` here with the code it prints.")
        guard context.arguments.has("--wait") else { return }
        let timeout = try timeoutSeconds(context.arguments[option: "--timeout"])
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            do {
                let report = try await session.engine.sync()
                terminal.line("Approved. " + DeviceSession.describe(report))
                return
            } catch  where error.code == .confirmationRequired && terminal.isInteractive {
                guard let code = terminal.readLine(prompt: "Approved. Confirmation code shown on the approving device: ") else {
                    throw CLIError(.usage, "no code given: run `walletvault pair confirm CODE`")
                }
                try await confirm(code: code, session: session, terminal: terminal)
                return
            } catch  where error.code == .noAccess && Date() < deadline {
                try? await Task.sleep(nanoseconds: 2_000_000_000)
            } catch  where error.code == .noAccess {
                throw CLIError(.noAccess, "no approval within \(Int(timeout)) s: approve the request, then run `walletvault pull`")
            } catch {
                throw session.translate(error)
            }
        }
    }

    static func runApprove(_ context: CommandContext) async throws(CLIError) {
        let text = try context.arguments.requirePositionals(1, "REQUEST", command: "pair approve")[0]
        let encoded = text == "-" ? String(decoding: try FileWriter.read("-"), as: UTF8.self) : text
        let request: PairingRequest
        do { request = try PairingRequest(encoded: encoded) } catch {
            throw CLIError(.usage, "that is not a pairing request (\(error.reason)): copy the whole `wvpair1.…` line")
        }
        let session = try context.session()
        let terminal = context.terminal
        try session.requireUsableKey()
        let sas = request.shortAuthenticationString
        terminal.line("Request from \"\(request.label)\"; short authentication string: \(sas)")
        if let given = context.arguments[option: "--sas"] {
            guard digits(given) == digits(sas) else {
                throw CLIError(
                    .usage,
                    "the digits differ from the new device's: not approved; the request may have been "
                        + "swapped, so ask the new device for a fresh one")
            }
        } else if !context.arguments.has("--yes") {
            guard terminal.isInteractive else {
                throw CLIError.usage(
                    "no terminal to confirm at: pass --sas DIGITS as read on the new device's screen, or --yes",
                    command: "pair approve")
            }
            let answer = terminal.readLine(prompt: "Does \"\(request.label)\" show \(sas)? [y/N] ")?.lowercased()
            guard answer == "y" || answer == "yes" else {
                throw CLIError(.usage, "not approved: run `walletvault pair approve` again once the digits match")
            }
        }
        let report = try await session.run("Enrolling the new device") { engine async throws(SyncError) in
            try await engine.approve(request)
        }
        try session.requireSaved(report)
        let code: String
        do { code = try await session.engine.confirmationCode(for: request) } catch { throw session.translate(error) }
        terminal.line("Approved \"\(request.label)\". Confirmation code for it: \(code)")
        terminal.line("On \"\(request.label)\" run `walletvault pair confirm \"\(code)\"` (or type the code where it asks).")
    }

    static func runConfirm(_ context: CommandContext) async throws(CLIError) {
        let code = try context.arguments.requirePositionals(1, "CODE", command: "pair confirm")[0]
        guard digits(code).count == 6 else { throw CLIError.usage("the confirmation code has six digits", command: "pair confirm") }
        let session = try context.session()
        try await confirm(code: code, session: session, terminal: context.terminal)
    }

    private static func confirm(code: String, session: DeviceSession, terminal: any Terminal) async throws(CLIError) {
        let report = try await session.run("Checking the vault against the code") { engine async throws(SyncError) in
            try await engine.confirmPairing(code: code)
        }
        terminal.line("Confirmed: the vault was written by the approving device. " + DeviceSession.describe(report))
    }

    private static func digits(_ text: String) -> String { text.filter(\.isNumber) }

    private static func timeoutSeconds(_ text: String?) throws(CLIError) -> Double {
        guard let text else { return 300 }
        guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
            throw CLIError.usage("--timeout needs seconds from 1 to 86400", command: "pair request")
        }
        return seconds
    }
}
