#!/usr/bin/env python3
"""Opens every vector in this directory with Python `cryptography`, written from docs/FORMAT.md alone.

Usage: python3 crosscheck.py   (needs `pip install cryptography` >= 44 for Argon2id)
Prints one line per vector and exits non-zero on the first mismatch.
"""
import base64, hashlib, hmac, json, struct, sys
from pathlib import Path

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.keywrap import aes_key_unwrap

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def b64u(text):
    assert "=" not in text and "+" not in text and "/" not in text
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64u_encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hkdf(ikm, info, salt=None):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def kcv(key):  # FORMAT.md §6: kek_id of a symmetric key
    return b64u_encode(hmac.new(key, b"WalletVault-v1 kek_id", hashlib.sha256).digest()[:16])


def canonical(value):  # FORMAT.md §5.1
    if value is None:
        return b"n"
    if value is True:
        return b"t"
    if value is False:
        return b"f"
    if isinstance(value, int):
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
    raise ValueError("fractional numbers are not allowed")


def recovery_ikm(text):  # FORMAT.md §7.4
    symbols = [ALPHABET.index({"O": "0", "I": "1", "L": "1"}.get(c, c)) for c in text.upper() if c not in "- "]
    assert len(symbols) == 35
    data = ""
    for group in range(7):
        chars = [group] + symbols[group * 5:(group + 1) * 5]
        total = 0
        for position, value in enumerate(reversed(chars)):
            addend = value * (2 if position % 2 else 1)
            total += addend // 32 + addend % 32
        assert total % 32 == 0, f"group {group + 1} mistyped"
        data += "".join(ALPHABET[v] for v in chars[1:5])
    return data.encode()


def gcm_open(key, iv, ciphertext, tag, aad=None):
    return AESGCM(key).decrypt(iv, ciphertext + tag, aad)


def unwrap(entry, vector):
    key, kind, alg = vector["key"], vector["kind"], entry.get("alg")
    wrapped = b64u(entry["dek_cipher"])
    if kind == "file":
        return aes_key_unwrap(b64u(key["k"]), wrapped)
    if kind == "recovery-code":
        return aes_key_unwrap(hkdf(recovery_ikm(key["recovery_code"]), b"WalletVault-v1 recovery code A256KW"), wrapped)
    if kind == "passphrase":
        assert entry["kdf"] == "Argon2id" and entry["m"] >= 19456 and entry["t"] >= 2
        derived = Argon2id(salt=b64u(entry["salt"]), length=32, iterations=entry["t"], lanes=entry["p"],
                           memory_cost=entry["m"]).derive(key["passphrase"].encode())
        assert kcv(derived) == entry["kek_id"]
        return aes_key_unwrap(derived, wrapped)
    if kind == "aes-gcm":
        if alg == "A256GCMKW":
            return gcm_open(b64u(key["k"]), b64u(entry["iv"]), wrapped, b64u(entry["tag"]))
        return gcm_open(b64u(key["k"]), wrapped[:12], wrapped[12:-16], wrapped[-16:])
    if kind == "rsa":
        private = serialization.load_pem_private_key(key["pkcs8_pem"].encode(), password=None)
        return private.decrypt(wrapped, padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None))
    private = ec.derive_private_key(int.from_bytes(b64u(key["d"]), "big"), ec.SECP256R1())
    if kind == "p256":
        epk = entry["epk"]
        point = b"\x04" + b64u(epk["x"]) + b64u(epk["y"])
        shared = private.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point))
        other = struct.pack(">I", 14) + b"ECDH-ES+A256KW" + struct.pack(">II", 0, 0) + struct.pack(">I", 256)
        kek = ConcatKDFHash(algorithm=hashes.SHA256(), length=32, otherinfo=other).derive(shared)
        return aes_key_unwrap(kek, wrapped)
    if kind == "p256-self":
        shared = private.exchange(ec.ECDH(), private.public_key())
        return gcm_open(hkdf(shared, b"vault-kek-v1"), wrapped[:12], wrapped[12:-16], wrapped[-16:])
    raise ValueError(kind)


def check(name):
    vector = json.loads(Path(f"{name}.key.json").read_text())
    blob = json.loads(Path(f"{name}.blob.json").read_text())
    entry = next(e for e in blob["wrappedDeks"] if e["kek_id"] == vector["kek_id"])
    dek = unwrap(entry, vector)
    assert b64u_encode(dek) == vector["dek"], "DEK"
    iv, ciphertext, tag = b64u(blob["iv"]), b64u(blob["cipher"]), b64u(blob["tag"])
    if "counter" in blob:  # extended form, FORMAT.md §5
        header = {k: v for k, v in blob.items() if k not in ("cipher", "iv", "tag")}
        mac_key = hkdf(dek, b"WalletVault-v1 header MAC key")
        macs = b""
        for member in ("wrappedDeks", "updatedUtc", "hint", "counter", "dek_seals"):
            data = b"WalletVault-v1-MAC\x00" + struct.pack(">I", len(member)) + member.encode()
            data += canonical(header[member]) if member in header else b"x"
            macs += hmac.new(mac_key, data, hashlib.sha256).digest()[:16]
        assert b64u_encode(macs) == blob["macs"], "macs"
        aad = b"WalletVault-v1-AAD\x00" + canonical(header)
        assert b64u_encode(aad) == vector["aad"], "AAD"
    else:
        aad = None
    plaintext = gcm_open(dek, iv, ciphertext, tag, aad)
    assert b64u_encode(plaintext) == vector["plaintext"], "plaintext"
    return entry.get("alg", "(seed form)")


if __name__ == "__main__":
    import os
    os.chdir(Path(__file__).parent)
    names = sorted(p.name[: -len(".key.json")] for p in Path(".").glob("*.key.json"))
    for name in names:
        print(f"ok  {name:24} {check(name)}")
    print(f"{len(names)} vectors open with Python cryptography")
