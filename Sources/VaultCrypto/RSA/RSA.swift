/// RSA with SHA-256: RSASSA-PKCS1-v1_5 and RSASSA-PSS signatures, RSAES-OAEP encryption; 2048-bit keys and up.
public enum RSA {}
