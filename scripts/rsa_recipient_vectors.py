#!/usr/bin/env python3
"""Writes Tests/VaultEnvelopeTests/Vectors/rsa/rsa-recipients.json: RSA public keys (n, e) a writer may or may not wrap
to (docs/FORMAT.md §4.1), with the verdict both SDKs must reach ("usable" or "malformed"). Primes come from
`openssl prime -generate`, so each run writes other keys of the same kinds; the committed file is the fixture.

    python3 scripts/rsa_recipient_vectors.py   (from the repository root)
"""
import subprocess, json, base64
def prime(bits):
    return int(subprocess.run(["openssl","prime","-generate","-bits",str(bits)],capture_output=True,text=True,check=True).stdout.strip())
def b64(i):
    b = i.to_bytes((i.bit_length()+7)//8, "big")
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def ok_n(bits):
    while True:
        p, q = prime(bits//2), prime(bits//2)
        n = p*q
        if n.bit_length() == bits and p != q: return n
cases = []
n = ok_n(2048)
cases.append(("a 2048-bit product of two primes, e = 65537", n, 65537, "usable"))
cases.append(("the same modulus, e = 3", n, 3, "usable"))
cases.append(("an even exponent", n, 65536, "malformed"))
cases.append(("the exponent 1", n, 1, "malformed"))
cases.append(("an exponent as large as the modulus", n, n, "malformed"))
cases.append(("an even modulus", n - 1, 65537, "malformed"))
while True:
    p = prime(2048)
    if p.bit_length() == 2048: break
cases.append(("a prime modulus", p, 65537, "malformed"))
while True:
    p = prime(2047); m = 3*p
    if m.bit_length() >= 2048: break
cases.append(("a modulus with the factor 3", m, 65537, "malformed"))
while True:
    p = prime(1024); m = p*p
    if m.bit_length() == 2048: break
cases.append(("the square of a prime", m, 65537, "malformed"))
while True:
    p = prime(683); m = p**3
    if m.bit_length() >= 2048: break
cases.append(("the cube of a prime", m, 65537, "malformed"))
n4 = ok_n(4096)
cases.append(("a 4096-bit modulus, e = 65537", n4, 65537, "usable"))
cases.append(("a 4096-bit modulus, a 65-bit exponent", n4, (1 << 64) + 1, "malformed"))
n3 = ok_n(3072)
cases.append(("a 3072-bit modulus, a 65-bit exponent", n3, (1 << 64) + 1, "usable"))
out = {"source": "scripts/rsa_recipient_vectors.py (primes from `openssl prime -generate`, " + subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.split(" (")[0] + ")",
       "cases": [{"name": a, "n": b64(b), "e": b64(c), "expect": d} for a, b, c, d in cases]}
with open("Tests/VaultEnvelopeTests/Vectors/rsa/rsa-recipients.json", "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print(len(cases), "cases")
