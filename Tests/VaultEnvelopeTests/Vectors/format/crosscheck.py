#!/usr/bin/env python3
"""A second reader of the WalletVault blob format, written from docs/FORMAT.md alone with Python `cryptography`.

Usage: python3 crosscheck.py [DIRECTORY]   (needs `cryptography` >= 44 for Argon2id; `make test` installs it in a venv)

Reads every NAME.blob.json beside its NAME.key.json in DIRECTORY (default: this file's directory) as a reader with the
state `reader` gives (counter, pinned anchor) would, following FORMAT.md §3-§8, §11 and the rules of §13. A vector
with `expect_error` must be refused with exactly that error; any other must open to `plaintext` with `dek` and `aad`,
and leave the reader with `anchor` and `expect_counter` when the vector names them. Then checks, on vectors edited in
memory, rules that no committed vector breaks (`check_rules`). Prints one line per vector and one for those rules,
and exits 1 if any disagrees, 2 if there is no vector.
"""
import base64, calendar, hashlib, hmac, json, re, struct, sys, unicodedata
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.keywrap import InvalidUnwrap, aes_key_unwrap

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # §7.4
P256_P = 2**256 - 2**224 + 2**192 + 2**96 - 1
MAX_SAFE = 2**53 - 1
SYMMETRIC_ALGS = {"A256KW", "A256GCMKW", "WV-ECDH-SELF+A256GCMKW"}  # entries that authenticate their writer (§11.2)


class Refused(Exception):
    """A reader's refusal, with the FORMAT.md error name."""

    def __init__(self, code, why):
        super().__init__(f"{code}: {why}")
        self.code = code


def refuse(code, why):
    raise Refused(code, why)


# --- §1: primitives ---------------------------------------------------------------------------------------------

def b64u_encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64u(text, code, what, empty_ok=False):
    """§1.1: canonical unpadded base64url only; `code` names the error for where the value sits."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        refuse(code, f"{what} is not unpadded base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64u_encode(data) != text:
        refuse(code, f"{what} is not the canonical spelling")
    if not data and not empty_ok:
        refuse(code, f"{what} is empty")
    return data


def hkdf(ikm, info, length=32):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=info).derive(ikm)


def kcv(key):  # §6: kek_id of a symmetric key
    return b64u_encode(hmac.new(key, b"WalletVault-v1 kek_id", hashlib.sha256).digest()[:16])


def gcm_open(key, iv, ciphertext, tag, aad=None):
    return AESGCM(key).decrypt(iv, ciphertext + tag, aad)


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def code_points(text):
    return len(text)  # a Python str is a sequence of code points (JSON surrogate pairs already combined)


# --- §3.1: JSON and the seed's shape ----------------------------------------------------------------------------

def parse_json(raw):
    """RFC 8259 with §3.1's rules: no BOM, UTF-8, no repeated names, depth <= 64, no lone surrogates, no NaN."""
    if raw.startswith(b"\xef\xbb\xbf"):
        refuse("invalidJSON", "byte-order mark")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        refuse("invalidJSON", "not UTF-8")

    def pairs(items):
        # Compared after unescaping (json does that) and up to canonical equivalence: the same after NFC (§3.1).
        names = [unicodedata.normalize("NFC", name) for name, _ in items]
        if len(set(names)) != len(names):
            refuse("invalidJSON", "a repeated member name")
        return dict(items)

    def constant(name):
        refuse("invalidJSON", f"{name} is not JSON")

    def number(literal):
        value = float(literal)
        if value in (float("inf"), float("-inf")):
            refuse("invalidJSON", "a number beyond a double")
        return value

    def integer(literal):  # §3.1: an integer literal too is refused when it rounds to infinity as a double
        number(literal)
        return int(literal)

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant, parse_float=number, parse_int=integer)
    except json.JSONDecodeError as error:
        refuse("invalidJSON", str(error))
    except RecursionError:
        refuse("invalidJSON", "nesting")

    def walk(node, depth):
        if isinstance(node, (dict, list)):
            if depth > 64:
                refuse("invalidJSON", "nesting deeper than 64")
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for name, child in items:
                if isinstance(name, str):
                    walk(name, depth)
                walk(child, depth + 1)
        elif isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                refuse("invalidJSON", "a lone surrogate escape")

    walk(value, 1)  # the top-level object is depth 1
    return value


TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|\+00:00)")


def timestamp(text, code, what):
    """§3.1's timestamp grammar; returns milliseconds since the epoch (second 60 is second 0 of the next minute)."""
    match = TIMESTAMP.fullmatch(text) if isinstance(text, str) and len(text) <= 40 else None
    if not match:
        refuse(code, f"{what} is not an RFC 3339 UTC timestamp")
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    if not (1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1] and hour < 24 and minute < 60 and second <= 60):
        refuse(code, f"{what} names no instant")
    fraction = (match.group(7) or ".")[1:4].ljust(3, "0")
    days = (calendar.timegm((year, month, day, 0, 0, 0)) // 86400)
    return ((days * 86400 + hour * 3600 + minute * 60 + second) * 1000) + int(fraction)


def names_with_nul(node):
    if isinstance(node, dict):
        return any("\0" in name or names_with_nul(child) for name, child in node.items())
    if isinstance(node, list):
        return any(names_with_nul(child) for child in node)
    return False


def check_shape(blob):
    """§3.1: what the server checks; every failure is invalidShape."""
    if not isinstance(blob, dict):
        refuse("invalidShape", "top level is not an object")
    if names_with_nul(blob):
        refuse("invalidShape", "a member name holds U+0000")
    if not (is_int(blob.get("v")) and blob["v"] == 1):
        refuse("invalidShape", "v is not the integer 1")
    entries = blob.get("wrappedDeks")
    if not isinstance(entries, list) or not 1 <= len(entries) <= 64:
        refuse("invalidShape", "wrappedDeks")
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("kek_id"), str) or not entry["kek_id"]:
            refuse("invalidShape", "an entry without a kek_id")
        b64u(entry.get("dek_cipher"), "invalidShape", "dek_cipher", empty_ok=True)
    b64u(blob.get("cipher"), "invalidShape", "cipher", empty_ok=True)
    if len(b64u(blob.get("iv"), "invalidShape", "iv")) != 12 or len(b64u(blob.get("tag"), "invalidShape", "tag")) != 16:
        refuse("invalidShape", "iv or tag of the wrong size")
    timestamp(blob.get("updatedUtc"), "invalidShape", "updatedUtc")
    if "hint" in blob and (not isinstance(blob["hint"], str) or code_points(blob["hint"]) > 256):
        refuse("invalidShape", "hint")


# --- §3.2, §4.1, §11.1: the extended form, strictly -------------------------------------------------------------

EXTENDED_MEMBERS = {"v", "wrappedDeks", "cipher", "iv", "tag", "updatedUtc", "hint", "counter", "dek_seals", "macs",
                    "vault_id", "epoch", "vault_secret", "previous"}


def positive(value, what):
    if not is_int(value) or not 1 <= value <= MAX_SAFE:
        refuse("malformed", f"{what} is not an integer from 1 to 2^53 - 1")
    return value


def only(obj, allowed, what):
    extra = set(obj) - set(allowed)
    if extra:
        refuse("malformed", f"{what} has members {sorted(extra)}")


def thumbprint(jwk):  # §6, RFC 7638
    if jwk["kty"] == "EC":
        members = {"crv": jwk["crv"], "kty": "EC", "x": jwk["x"], "y": jwk["y"]}
    else:
        members = {"e": jwk["e"], "kty": "RSA", "n": jwk["n"]}
    return b64u_encode(hashlib.sha256(json.dumps(members, sort_keys=True, separators=(",", ":")).encode()).digest())


def check_jwk(jwk, kty, what):
    """§4.1's table of JWK checks, applied when the blob is parsed: by the JWK's own `kty`, then its type (§8.2)."""
    if not isinstance(jwk, dict):
        refuse("malformed", f"{what} is not an object")
    if jwk.get("kty") not in ("EC", "RSA"):
        refuse("malformed", f"{what}.kty is not EC or RSA")
    if jwk["kty"] == "EC":
        only(jwk, {"kty", "crv", "x", "y"}, what)
        if jwk.get("crv") != "P-256":
            refuse("malformed", f"{what}.crv")
        x, y = b64u(jwk.get("x"), "malformed", f"{what}.x"), b64u(jwk.get("y"), "malformed", f"{what}.y")
        if len(x) != 32 or len(y) != 32 or int.from_bytes(x, "big") >= P256_P or int.from_bytes(y, "big") >= P256_P:
            refuse("malformed", f"{what}: coordinates must be 32 bytes, each below p")
        try:
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b"\x04" + x + y)
        except ValueError:
            refuse("malformed", f"{what} is not a point on P-256")
    else:
        only(jwk, {"kty", "n", "e"}, what)
        n, e = b64u(jwk.get("n"), "malformed", f"{what}.n"), b64u(jwk.get("e"), "malformed", f"{what}.e")
        if n[0] == 0 or e[0] == 0:
            refuse("malformed", f"{what}: a leading zero byte in n or e")
        bits = int.from_bytes(n, "big").bit_length()
        if bits > 16384:
            refuse("malformed", f"{what}: more than 16384 bits")
        if bits < 2048:
            refuse("weakParameters", f"{what}: {bits}-bit RSA key")
    if jwk["kty"] != kty:
        refuse("malformed", f"{what}.kty is not {kty}")
    return jwk


def check_entry(entry, index):
    what = f"wrappedDeks[{index}]"
    alg = entry.get("alg")  # §8.2: alg a string, then known, then dek_cipher, then what the alg needs
    if not isinstance(alg, str):
        refuse("malformed", f"{what}.alg")
    if alg not in ("A256KW", "A256GCMKW", "RSA-OAEP-256", "ECDH-ES+A256KW", "WV-ECDH-SELF+A256GCMKW"):
        refuse("unsupportedAlgorithm", f"{what}.alg {alg}")
    dek_cipher = b64u(entry["dek_cipher"], "malformed", f"{what}.dek_cipher")
    allowed = {"kek_id", "dek_cipher", "alg", "label", "created"}
    if alg == "A256KW":
        lengths, kdf = (40, 64), entry.get("kdf")  # §11.9: a symmetric entry may wrap the 56-byte bound payload
        if "kdf" not in entry:  # `"kdf": null` is present, and not a string: malformed below
            pass
        elif kdf == "HKDF-SHA256":
            allowed |= {"kdf"}
        elif kdf == "Argon2id":
            allowed |= {"kdf", "salt", "m", "t", "p"}
            if len(b64u(entry.get("salt"), "malformed", f"{what}.salt")) < 16:
                refuse("malformed", f"{what}.salt is shorter than 16 bytes")
            for cost in "mtp":
                positive(entry.get(cost), f"{what}.{cost}")
        elif isinstance(kdf, str):
            refuse("unsupportedAlgorithm", f"{what}.kdf {kdf}")
        else:
            refuse("malformed", f"{what}.kdf")
    elif alg == "A256GCMKW":
        lengths = (32, 56)
        allowed |= {"iv", "tag"}
        if len(b64u(entry.get("iv"), "malformed", f"{what}.iv")) != 12 or len(b64u(entry.get("tag"), "malformed", f"{what}.tag")) != 16:
            refuse("malformed", f"{what}: iv must be 12 bytes, tag 16")
    elif alg == "RSA-OAEP-256":
        allowed |= {"jwk"}
        lengths = (len(b64u(check_jwk(entry.get("jwk"), "RSA", f"{what}.jwk")["n"], "malformed", "n")),)
    elif alg == "ECDH-ES+A256KW":
        lengths = (40,)
        allowed |= {"epk", "jwk"}
        check_jwk(entry.get("epk"), "EC", f"{what}.epk")
        check_jwk(entry.get("jwk"), "EC", f"{what}.jwk")
    else:  # WV-ECDH-SELF+A256GCMKW
        lengths = (60, 84)
    if len(dek_cipher) not in lengths:
        refuse("malformed", f"{what}.dek_cipher must be {' or '.join(map(str, lengths))} bytes")
    only(entry, allowed, what)
    if not isinstance(entry.get("label"), str) or code_points(entry["label"]) > 256:
        refuse("malformed", f"{what}.label")
    timestamp(entry.get("created"), "malformed", f"{what}.created")
    if alg in ("RSA-OAEP-256", "ECDH-ES+A256KW") and entry["kek_id"] != thumbprint(entry["jwk"]):
        refuse("malformed", f"{what}.kek_id is not the thumbprint of its jwk")


def check_extended(blob):
    only(blob, EXTENDED_MEMBERS, "the top level")
    for index, entry in enumerate(blob["wrappedDeks"]):
        check_entry(entry, index)
    ids = [entry["kek_id"] for entry in blob["wrappedDeks"]]
    if len(set(ids)) != len(ids):
        refuse("malformed", "a repeated kek_id")
    positive(blob.get("counter"), "counter")
    positive(blob.get("dek_seals"), "dek_seals")
    if len(b64u(blob.get("macs"), "malformed", "macs")) != 80:
        refuse("malformed", "macs must be 80 bytes")
    present = [name in blob for name in ("vault_id", "epoch", "vault_secret")]
    if any(present) and not all(present):
        refuse("malformed", "vault_id, epoch and vault_secret come together")
    if all(present):
        if len(b64u(blob["vault_id"], "malformed", "vault_id")) != 16:
            refuse("malformed", "vault_id must be 16 bytes")
        epoch = positive(blob["epoch"], "epoch")
        if len(b64u(blob["vault_secret"], "malformed", "vault_secret")) != 12 + 32 * min(epoch, 16) + 16:
            refuse("malformed", "vault_secret has the wrong length for its epoch")
    if "previous" in blob and (not all(present) or len(b64u(blob["previous"], "malformed", "previous")) != 32):
        refuse("malformed", "previous is 32 bytes, in a blob with a vault identity")  # §11.10


# --- §5: the extended header ------------------------------------------------------------------------------------

def canonical(value):  # §5.1
    if value is None:
        return b"n"
    if value is True:
        return b"t"
    if value is False:
        return b"f"
    if is_int(value):
        return b"i" + struct.pack(">q", value)
    if isinstance(value, str):
        raw = value.encode()
        return b"s" + struct.pack(">I", len(raw)) + raw
    if isinstance(value, list):
        return b"a" + struct.pack(">I", len(value)) + b"".join(canonical(v) for v in value)
    if isinstance(value, dict):
        out = b"o" + struct.pack(">I", len(value))
        for key in sorted(value, key=lambda k: k.encode()):
            out += struct.pack(">I", len(key.encode())) + key.encode() + canonical(value[key])
        return out
    refuse("malformed", "a number with a fraction or exponent")


MAC_ERRORS = [("wrappedDeks", "recipientsAltered"), ("updatedUtc", "timestampAltered"), ("hint", "hintAltered"),
              ("counter", "counterAltered"), ("dek_seals", "counterAltered")]


def check_macs(blob, dek):  # §5.2
    mac_key = hkdf(dek, b"WalletVault-v1 header MAC key")
    macs = b64u(blob["macs"], "malformed", "macs")
    for position, (member, error) in enumerate(MAC_ERRORS):
        data = b"WalletVault-v1-MAC\x00" + struct.pack(">I", len(member)) + member.encode()
        data += canonical(blob[member]) if member in blob else b"x"
        if not hmac.compare_digest(hmac.new(mac_key, data, hashlib.sha256).digest()[:16], macs[16 * position:16 * position + 16]):
            refuse(error, f"the MAC of {member}")


def header_aad(blob):  # §5.3
    return b"WalletVault-v1-AAD\x00" + canonical({k: v for k, v in blob.items() if k not in ("cipher", "iv", "tag")})


# --- §6, §7: keys -----------------------------------------------------------------------------------------------

def recovery_ikm(text):  # §7.4
    symbols = []
    for character in text:
        if character in "- \t\n\r\u00a0":
            continue
        if not character.isascii():
            refuse("invalidRecoveryCode", "a character outside the alphabet")
        character = {"O": "0", "I": "1", "L": "1"}.get(character.upper(), character.upper())
        if character not in ALPHABET:
            refuse("invalidRecoveryCode", "a character outside the alphabet")
        symbols.append(ALPHABET.index(character))
    if len(symbols) != 35:
        refuse("invalidRecoveryCode", "not 35 characters")
    data = ""
    for group in range(7):
        chars = [group] + symbols[group * 5:(group + 1) * 5]
        total = 0
        for position, value in enumerate(reversed(chars)):
            addend = value * (2 if position % 2 else 1)
            total += addend // 32 + addend % 32
        if total % 32:
            refuse("invalidRecoveryCode", f"group {group + 1} mistyped")
        data += "".join(ALPHABET[v] for v in chars[1:5])
    return data.encode()


ARGON2_FLOOR, ARGON2_CEILING, ARGON2_ENTRIES, ARGON2_BUDGET = (19456, 2, 1), (262144, 8, 4), 4, 4 * 65536 * 3


def passphrase_key(blob, passphrase):
    """§7.3: check every passphrase entry's costs, their number and total work, then derive (NFC, then as typed)."""
    extended = "counter" in blob  # a seed-form blob has no passphrase entries, whatever its entries carry (§4.2)
    entries = [e for e in blob["wrappedDeks"] if extended and e.get("alg") == "A256KW" and e.get("kdf") == "Argon2id"]
    for entry in entries:
        costs = (entry["m"], entry["t"], entry["p"])
        if not all(low <= cost <= high for cost, low, high in zip(costs, ARGON2_FLOOR, ARGON2_CEILING)):
            refuse("weakParameters", f"Argon2id costs {costs} outside the floor and ceiling")
    if len(entries) > ARGON2_ENTRIES:
        refuse("workLimitExceeded", f"{len(entries)} passphrase entries")
    if sum(entry["m"] * entry["t"] for entry in entries) > ARGON2_BUDGET:
        refuse("workLimitExceeded", "total Argon2id memory x passes")
    normalized = unicodedata.normalize("NFC", passphrase).encode()
    for password in [normalized] if normalized == passphrase.encode() else [normalized, passphrase.encode()]:
        for entry in entries:
            derived = Argon2id(salt=b64u(entry["salt"], "malformed", "salt"), length=32, iterations=entry["t"],
                               lanes=entry["p"], memory_cost=entry["m"]).derive(password)
            if kcv(derived) == entry["kek_id"]:
                return derived, entry["kek_id"]
    refuse("noMatchingKey", "no passphrase entry matches")


def jwk_of_public(public):
    numbers = public.public_numbers()
    if isinstance(public, ec.EllipticCurvePublicKey):
        return {"kty": "EC", "crv": "P-256", "x": b64u_encode(numbers.x.to_bytes(32, "big")), "y": b64u_encode(numbers.y.to_bytes(32, "big"))}
    return {"kty": "RSA", "n": b64u_encode(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
            "e": b64u_encode(numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big"))}


class Key:
    """The reader's key as a vector's `key.json` describes it: its kek_id (§6), its alg, and how it unwraps."""

    def __init__(self, vector, blob):
        self.kind, material = vector["kind"], vector["key"]
        if self.kind == "file":
            self.secret, self.alg = b64u(material["k"], "malformed", "k"), ("A256KW", None)
            self.kek_id = kcv(self.secret)
        elif self.kind == "recovery-code":
            self.secret = hkdf(recovery_ikm(material["recovery_code"]), b"WalletVault-v1 recovery code A256KW")
            self.alg, self.kek_id = ("A256KW", "HKDF-SHA256"), kcv(self.secret)
        elif self.kind == "passphrase":
            self.secret, self.kek_id = passphrase_key(blob, material["passphrase"])
            self.alg = ("A256KW", "Argon2id")
        elif self.kind == "aes-gcm":  # an app-named key (§6) keeps its name
            self.secret, self.alg = b64u(material["k"], "malformed", "k"), ("A256GCMKW", None)
            self.kek_id = vector.get("kek_id") or kcv(self.secret)
        elif self.kind == "rsa":
            self.private = serialization.load_pem_private_key(material["pkcs8_pem"].encode(), password=None)
            self.alg, self.kek_id = ("RSA-OAEP-256", None), thumbprint(jwk_of_public(self.private.public_key()))
        elif self.kind in ("p256", "p256-self"):
            self.private = ec.derive_private_key(int.from_bytes(b64u(material["d"], "malformed", "d"), "big"), ec.SECP256R1())
            jwk = jwk_of_public(self.private.public_key())
            self.public_raw = b64u(jwk["x"], "malformed", "x") + b64u(jwk["y"], "malformed", "y")
            if self.kind == "p256":
                self.alg, self.kek_id = ("ECDH-ES+A256KW", None), thumbprint(jwk)
            else:
                self.alg, self.kek_id = ("WV-ECDH-SELF+A256GCMKW", None), b64u_encode(self.public_raw)
        else:
            raise ValueError(f"unknown kind {self.kind}")

    def unwrap(self, entry, extended):
        """§4: what one entry wraps (a 32-byte DEK, or a symmetric entry's 56-byte bound payload, §11.9), or unwrapFailed.

        The blob's form says whether the entry is a seed-form one (§2), never the entry's own members."""
        wrapped = b64u(entry["dek_cipher"], "malformed", "dek_cipher", empty_ok=True)
        seed = not extended
        if not seed and (entry["alg"], entry.get("kdf")) != self.alg:
            refuse("unwrapFailed", f"a {entry['alg']} entry for a {self.alg[0]} key")
        if seed and self.kind in ("recovery-code", "passphrase", "p256"):  # no seed-form scheme (§4.2)
            refuse("unwrapFailed", f"a seed-form entry for a {self.kind} key")
        try:
            if self.kind in ("file", "recovery-code", "passphrase"):
                dek = aes_key_unwrap(self.secret, wrapped)
            elif self.kind == "aes-gcm" and not seed:
                dek = gcm_open(self.secret, b64u(entry["iv"], "malformed", "iv"), wrapped, b64u(entry["tag"], "malformed", "tag"))
            elif self.kind in ("aes-gcm", "p256-self"):
                if len(wrapped) not in (60, 84):
                    refuse("unwrapFailed", "not iv(12) || ciphertext(32 or 56) || tag(16)")
                key = self.secret if self.kind == "aes-gcm" else hkdf(self.private.exchange(ec.ECDH(), self.private.public_key()), b"vault-kek-v1")
                dek = gcm_open(key, wrapped[:12], wrapped[12:-16], wrapped[-16:])
            elif self.kind == "rsa":
                dek = None
                # RSA-OAEP-256 is MGF1-SHA-256 only; a seed entry may be Java's default MGF1-SHA-1 too (§4.2).
                for mask in [hashes.SHA256()] + ([hashes.SHA1()] if seed else []):
                    try:
                        dek = self.private.decrypt(wrapped, padding.OAEP(mgf=padding.MGF1(mask), algorithm=hashes.SHA256(), label=None))
                        break
                    except ValueError:
                        continue
                if dek is None:
                    refuse("unwrapFailed", "RSA-OAEP does not decrypt")
            else:  # p256, §7.2
                epk = entry["epk"]
                point = b"\x04" + b64u(epk["x"], "malformed", "x") + b64u(epk["y"], "malformed", "y")
                shared = self.private.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point))
                other = struct.pack(">I", 14) + b"ECDH-ES+A256KW" + struct.pack(">II", 0, 0) + struct.pack(">I", 256)
                dek = aes_key_unwrap(ConcatKDFHash(algorithm=hashes.SHA256(), length=32, otherinfo=other).derive(shared), wrapped)
        except (InvalidUnwrap, InvalidTag, ValueError):
            refuse("unwrapFailed", "the key does not unwrap this entry")
        if len(dek) != 32 and not (len(dek) == 56 and self.kind in ("file", "recovery-code", "passphrase", "aes-gcm", "p256-self")):
            refuse("unwrapFailed", "neither a 32-byte DEK nor a symmetric entry's bound payload")
        return dek


# --- §11: vault identity ----------------------------------------------------------------------------------------

def fingerprint(raw_vault_id, epoch, secret):
    return hashlib.sha256(b"WalletVault-v1 anchor\x00" + raw_vault_id + struct.pack(">Q", epoch) + secret).digest()


def open_vault_secret(blob, dek):
    """§11.1: the carried secrets by epoch; `malformed` if they do not open."""
    raw_id, epoch = b64u(blob["vault_id"], "malformed", "vault_id"), blob["epoch"]
    sealed = b64u(blob["vault_secret"], "malformed", "vault_secret")
    aad = b"WalletVault-v1 vault secret\x00" + raw_id + struct.pack(">Q", epoch)
    try:
        secrets = gcm_open(hkdf(dek, b"WalletVault-v1 vault secret"), sealed[:12], sealed[12:-16], sealed[-16:], aad)
    except InvalidTag:
        refuse("malformed", "vault_secret does not open")
    carried = min(epoch, 16)
    return raw_id, {epoch - carried + 1 + i: secrets[32 * i:32 * i + 32] for i in range(carried)}


def confirmation_code(secret, raw_id, epoch, kek_id, raw_blob):  # §11.4
    name = kek_id.encode()
    mac = hmac.new(secret, b"WalletVault-v1 pairing confirmation v2\x00" + raw_id + struct.pack(">Q", epoch) + struct.pack(">I", len(name)) + name
                   + hashlib.sha256(raw_blob).digest(), hashlib.sha256).digest()
    code = int.from_bytes(mac[:4], "big") % 1_000_000
    return f"{code // 1000:03d} {code % 1000:03d}"


# --- §8: reading ------------------------------------------------------------------------------------------------

def read(raw, vector):
    """Opens one blob as §8 and §11.3 say; returns (plaintext, dek, aad, new anchor, new counter)."""
    state = vector.get("reader") or {}
    counter, pinned = state.get("counter", 0), state.get("anchor")
    blob = parse_json(raw)  # step 1
    check_shape(blob)
    extended = "counter" in blob
    if extended:  # step 2
        check_extended(blob)
    elif any(name in blob for name in ("vault_id", "epoch", "vault_secret", "previous")):
        refuse("malformed", "the identity members come only with the extended form")  # §11.1
    anchored = extended and "vault_id" in blob
    if pinned:  # §11.3 step 1, before any key
        if not anchored:
            refuse("downgrade", "no vault identity after an anchor was pinned")
        if blob["vault_id"] != pinned["vault_id"]:
            refuse("wrongVault", "another vault")
        if blob["epoch"] < pinned["epoch"]:
            refuse("downgrade", "an older secret epoch")
    if (extended and blob["counter"] < counter) or (not extended and counter > 0):  # step 3
        refuse("rollback", "an older version")
    if extended and counter > 0 and blob["counter"] - counter > 2 ** 20:  # step 3: no room left for honest writes
        refuse("counterJump", "more than 2^20 above the highest accepted counter")
    key = Key(vector, blob)  # step 4
    if vector.get("kek_id") is not None and key.kek_id != vector["kek_id"]:
        raise AssertionError(f"the key's kek_id {key.kek_id} is not the vector's {vector['kek_id']}")
    candidates = [entry for entry in blob["wrappedDeks"] if entry["kek_id"] == key.kek_id]
    if not candidates:
        refuse("noMatchingKey", "no entry for this key")
    dek, entry = None, None
    for candidate in candidates if not extended else candidates[:1]:  # seed entries sharing a kek_id: in turn (§4.2)
        try:
            payload, entry = key.unwrap(candidate, extended), candidate
            dek, binding = payload[:32], payload[32:] or None
            break
        except Refused:
            if candidate is candidates[-1] or extended:
                raise
    aad = None
    if extended:
        check_macs(blob, dek)  # step 5
        aad = header_aad(blob)
    try:  # step 6
        plaintext = gcm_open(dek, b64u(blob["iv"], "invalidShape", "iv"), b64u(blob["cipher"], "invalidShape", "cipher", empty_ok=True),
                             b64u(blob["tag"], "invalidShape", "tag"), aad)
    except InvalidTag:
        refuse("ciphertextAltered", "the vault does not open")
    if extended:  # §11.7: a second version under a counter already accepted is a fork
        seen = {item["counter"]: item["digest"] for item in state.get("seen", [])}
        digest = hashlib.sha256(b"WalletVault-v1 version digest\x00" + aad + b64u(blob["iv"], "invalidShape", "iv")
                                + b64u(blob["tag"], "invalidShape", "tag")).digest()
        if blob["counter"] in seen and seen[blob["counter"]] != b64u_encode(digest):
            refuse("forkDetected", "another version under an accepted counter")
        if blob["counter"] - 1 in seen and blob.get("previous") != seen[blob["counter"] - 1]:  # §11.10: the chain
            refuse("forkDetected", "the version does not follow the one accepted just below it")
    authenticates = (entry["alg"] if extended else key.alg[0]) in SYMMETRIC_ALGS
    anchor = pinned
    if anchored:  # step 7, §11.3 step 2
        raw_id, secrets = open_vault_secret(blob, dek)
        epoch = blob["epoch"]
        # §11.9: a symmetric entry proves its writer when bound to this vault and epoch, unbound at epoch 1 only.
        if binding is not None and binding != raw_id + struct.pack(">Q", epoch):
            refuse("writerNotMember", "the entry was wrapped for another epoch or vault")
        if binding is None and epoch > 1:
            authenticates = False
        new = {"vault_id": blob["vault_id"], "epoch": epoch, "fingerprint": b64u_encode(fingerprint(raw_id, epoch, secrets[epoch]))}
        if pinned:
            if pinned["epoch"] not in secrets:
                refuse("unconfirmedVault", "the pinned epoch's secret is no longer carried")
            if b64u_encode(fingerprint(raw_id, pinned["epoch"], secrets[pinned["epoch"]])) != pinned["fingerprint"]:
                refuse("writerNotMember", "the writer does not hold the pinned secret")
        elif not authenticates:
            code = vector.get("confirmation_code")
            if code is None:
                refuse("unconfirmedVault", "a public-key entry and nothing pinned")
            if re.sub(r"[^0-9]", "", code) != re.sub(r"[^0-9]", "", confirmation_code(secrets[epoch], raw_id, epoch, entry["kek_id"], raw)):
                refuse("pairingMismatch", "the confirmation code differs")
        anchor = new
    elif binding is not None:
        refuse("writerNotMember", "a bound entry in a blob that names no vault")
    elif not pinned and not authenticates:  # §11.3: no identity, no pinned anchor, a public-key entry proves no writer
        refuse("unconfirmedVault", "no vault identity read through a public-key entry")
    if extended:  # step 8
        counter = max(counter, blob["counter"])
    return plaintext, dek, aad, anchor, counter


def pairing_digits(raw_public):  # §11.4: the comparison digits of a P-256 public key X ‖ Y
    digits = f"{int.from_bytes(hashlib.sha256(b'WalletVault-v2 pairing comparison' + bytes(1) + raw_public).digest()[:8], 'big'):020d}"
    return " ".join(digits[i:i + 4] for i in range(0, 20, 4))


def check(directory, name):
    vector = json.loads((directory / f"{name}.key.json").read_text())
    raw = (directory / f"{name}.blob.json").read_bytes()
    if "pairing_digits" in vector:  # a key alone: needs no blob
        key = Key(vector, {})
        assert pairing_digits(key.public_raw) == vector["pairing_digits"], f"pairing digits {pairing_digits(key.public_raw)}"
    expected = vector.get("expect_error")
    try:
        plaintext, dek, aad, anchor, counter = read(raw, vector)
    except Refused as refusal:
        if refusal.code == expected:
            return f"refused {expected}"
        raise AssertionError(f"refused {refusal}" + (f", expected {expected}" if expected else ""))
    if expected:
        raise AssertionError(f"opened, expected {expected}")
    assert b64u_encode(dek) == vector["dek"], "DEK"
    assert b64u_encode(plaintext) == vector["plaintext"], "plaintext"
    if "aad" in vector:
        assert aad is not None and b64u_encode(aad) == vector["aad"], "AAD"
    if "anchor" in vector:
        assert anchor == vector["anchor"], f"anchor {anchor}"
    if "expect_counter" in vector:
        assert counter == vector["expect_counter"], f"counter {counter}"
    return vector.get("alg") or "(seed form)"


P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def write_key(secret, raw_vault_id, epoch):
    """§11.8: the first HKDF candidate that is a P-256 scalar in 1 … n − 1, and its public key X ‖ Y."""
    for attempt in range(256):
        info = b"WalletVault-v1 write key\x00" + struct.pack(">Q", epoch) + bytes([attempt])
        scalar = int.from_bytes(HKDF(hashes.SHA256(), 32, raw_vault_id, info).derive(secret), "big")
        if 1 <= scalar < P256_N:
            numbers = ec.derive_private_key(scalar, ec.SECP256R1()).public_key().public_numbers()
            return numbers.x.to_bytes(32, "big") + numbers.y.to_bytes(32, "big")
    raise AssertionError("no scalar among 256 candidates")


def check_write_proof(path):
    """§11.8 against write-proof.json: both write keys, the proof message, and the signature verifies."""
    vector = json.loads(path.read_text())
    raw = lambda name: b64u(vector[name], "malformed", name)
    key = write_key(raw("vault_secret"), raw("vault_id"), vector["epoch"])
    assert b64u_encode(key) == vector["write_key"], "write_key"
    assert b64u_encode(write_key(raw("next_vault_secret"), raw("vault_id"), vector["next_epoch"])) == vector["next_write_key"], "next_write_key"
    message = (b"WalletVault-v1 write proof\x00" + vector["action"].encode() + b"\x00" + vector["stored_sync_id"].encode() + b"\x00"
               + hashlib.sha256(vector["body"].encode()).digest() + raw("next_write_key"))
    assert message == raw("message"), "message"
    signature = raw("signature")
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b"\x04" + key)
    public.verify(encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")), message,
                  ec.ECDSA(hashes.SHA256()))
    return "write key, proof message and signature"


def check_rules(directory):
    """Rules of FORMAT.md §3.1, §4.1, §4.2 and §8.2 that no committed vector breaks, on blobs edited from the vectors."""
    def load(name):
        return json.loads((directory / f"{name}.key.json").read_text()), (directory / f"{name}.blob.json").read_bytes()

    def code(raw, vector):
        try:
            read(raw, {k: v for k, v in vector.items() if k != "expect_error"})
        except Refused as refusal:
            return refusal.code
        return None

    def edited(raw, change):
        blob = json.loads(raw)
        change(blob)
        return json.dumps(blob).encode()

    file_key, a256kw = load("a256kw")
    cases = [  # (what, raw, vector, expected code; None = opens)
        ("a top level that is not an object", b"[]", file_key, "invalidShape"),
        ("names repeated through an escape", b'{"a":1,"\\u0061":2}', file_key, "invalidJSON"),
        ("canonically equivalent names", '{"\u00e9":1,"e\u0301":2}'.encode(), file_key, "invalidJSON"),
        ("a 400-digit integer, in a member of its own", a256kw.replace(b'"v":1,', b'"x":' + b"9" * 400 + b',"v":1,'), file_key, "invalidJSON"),
        ("a 300-digit integer counter", a256kw.replace(b'"counter":1', b'"counter":' + b"9" * 300), file_key, "malformed"),
        ("alg not a string", edited(a256kw, lambda b: b["wrappedDeks"][0].update(alg=5)), file_key, "malformed"),
        ("kdf null", edited(a256kw, lambda b: b["wrappedDeks"][0].update(kdf=None)), file_key, "malformed"),
        ("an unknown alg before a bad label in a later entry", edited(a256kw, lambda b: b["wrappedDeks"].extend(
            [dict(b["wrappedDeks"][0], kek_id="second", label=5)]) or b["wrappedDeks"][0].update(alg="X")), file_key, "unsupportedAlgorithm"),
        ("an unknown top-level member before an unknown alg", edited(a256kw, lambda b: b.update(extra=1) or b["wrappedDeks"][0].update(alg="X")),
         file_key, "malformed"),
        ("an unknown kdf with an empty dek_cipher", edited(a256kw, lambda b: b["wrappedDeks"][0].update(kdf="X", dek_cipher="")), file_key, "malformed"),
        ("an unknown kdf with a dek_cipher of the wrong length", edited(a256kw, lambda b: b["wrappedDeks"][0].update(kdf="X", dek_cipher="AAAA")),
         file_key, "unsupportedAlgorithm"),
    ]
    passphrase_key, passphrase = load("a256kw-passphrase")
    cases.append(("a 15-byte salt", edited(passphrase, lambda b: b["wrappedDeks"][0].update(salt=b64u_encode(bytes(15)))), passphrase_key, "malformed"))
    ecdh_key, ecdh = load("ecdh-es+a256kw")
    rsa_1024 = json.loads((directory / "negative-rsa-1024.blob.json").read_bytes())["wrappedDeks"]
    small_jwk = next(entry["jwk"] for entry in rsa_1024 if entry.get("alg") == "RSA-OAEP-256")
    cases.append(("a 1024-bit RSA jwk in an ECDH-ES+A256KW entry", edited(ecdh, lambda b: b["wrappedDeks"][0].update(jwk=small_jwk)), ecdh_key,
                  "weakParameters"))

    # §4.2: seed-form entries, decided by the blob's form. A seed blob with one entry for each key below.
    dek, iv = bytes(range(32)), bytes(12)
    sealed = AESGCM(dek).encrypt(iv, b"{}", None)

    def seed_blob(entry):
        return json.dumps({"v": 1, "wrappedDeks": [entry], "cipher": b64u_encode(sealed[:-16]), "iv": b64u_encode(iv),
                           "tag": b64u_encode(sealed[-16:]), "updatedUtc": "2026-08-12T19:00:00Z"}).encode()

    from cryptography.hazmat.primitives.keywrap import aes_key_wrap
    file_kek = Key(file_key, {})
    cases.append(("a seed entry with a stray alg, for a stored key", seed_blob(
        {"kek_id": file_kek.kek_id, "dek_cipher": b64u_encode(aes_key_wrap(file_kek.secret, dek)), "alg": "A256GCMKW"}), file_key, None))
    recovery_key, _ = load("a256kw-recovery-code")
    recovery_kek = Key(recovery_key, {})
    cases.append(("a seed RFC 3394 entry under a recovery code's id", seed_blob(
        {"kek_id": recovery_kek.kek_id, "dek_cipher": b64u_encode(aes_key_wrap(recovery_kek.secret, dek))}), recovery_key, "unwrapFailed"))
    ecdh_kek = Key(ecdh_key, {})
    cases.append(("a seed entry under a P-256 key's id", seed_blob({"kek_id": ecdh_kek.kek_id, "dek_cipher": b64u_encode(bytes(40))}),
                  ecdh_key, "unwrapFailed"))
    cases.append(("a seed entry with passphrase members", seed_blob(dict(json.loads(passphrase)["wrappedDeks"][0])), passphrase_key,
                  "noMatchingKey"))
    failures = [f"{what}: {code(raw, vector)}, expected {expected}" for what, raw, vector, expected in cases if code(raw, vector) != expected]
    if failures:
        raise AssertionError("; ".join(failures))
    return f"{len(cases)} rules of §3.1, §4.1, §4.2 and §8.2"


def main():
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    names = sorted(p.name[: -len(".key.json")] for p in directory.glob("*.key.json") if (directory / (p.name[: -len(".key.json")] + ".blob.json")).exists())
    if not names:
        print(f"crosscheck: no vectors in {directory}")
        return 2
    failures = 0
    for name in names:
        try:
            print(f"ok    {name:44} {check(directory, name)}")
        except Exception as error:  # noqa: BLE001 - report every vector, then fail
            failures += 1
            print(f"FAIL  {name:44} {type(error).__name__}: {error}")
    for proof in sorted(directory.glob("*write-proof.json")):  # Python-written and Kotlin-written
        names.append(proof.name)
        try:
            print(f"ok    {proof.name:44} {check_write_proof(proof)}")
        except Exception as error:  # noqa: BLE001
            failures += 1
            print(f"FAIL  {proof.name:44} {type(error).__name__}: {error}")
    names.append("rules")
    try:
        print(f"ok    {'(edited vectors)':44} {check_rules(directory)}")
    except Exception as error:  # noqa: BLE001
        failures += 1
        print(f"FAIL  {'(edited vectors)':44} {type(error).__name__}: {error}")
    print(f"crosscheck: {len(names) - failures} of {len(names)} vectors and rule checks as expected with Python cryptography")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
