import type { ObjectStoreConfig, StoreCredentials } from "./types.js";

type Provider = ObjectStoreConfig["provider"];

/**
 * The file names of the credentials Secret, per provider: the keys a user puts in the Secret, the
 * files the executor finds where it is mounted, and the keys the controller reads. Part of the
 * executor's contract, kept here beside the one reading of them.
 */
export const CredentialFiles = {
  s3: {
    accessKeyId: "accessKeyId",
    secretAccessKey: "secretAccessKey",
    sessionToken: "sessionToken",
    caCert: "ca.crt",
  },
  azure: {
    accountKey: "accountKey",
    sasToken: "sasToken",
    connectionString: "connectionString",
    caCert: "ca.crt",
  },
  gcs: { serviceAccountJson: "credentials.json", caCert: "ca.crt" },
} as const;

/** Every file name of the credentials Secret a provider reads. */
export function credentialFileNames(provider: Provider): string[] {
  return Object.values(CredentialFiles[provider]);
}

/**
 * The credentials a provider needs, from the credentials Secret's files however they were read (a
 * mounted folder in the executor, the Secret's data in the controller): one reading for both, so
 * they cannot disagree. A half-given pair (an access key without its secret) is an error naming the
 * missing key; nothing at all means "use the provider's default chain". Values are never logged.
 */
export function credentialsFrom(
  provider: Provider,
  file: (name: string) => string | undefined,
): StoreCredentials {
  const text = (name: string) => file(name)?.trim() || undefined;
  const caCert = text(CredentialFiles[provider].caCert);
  if (provider === "s3") {
    const k = CredentialFiles.s3;
    const accessKeyId = text(k.accessKeyId);
    const secretAccessKey = text(k.secretAccessKey);
    if ((accessKeyId === undefined) !== (secretAccessKey === undefined))
      throw new Error(
        `credentials Secret: ${accessKeyId === undefined ? k.accessKeyId : k.secretAccessKey} is missing (both ${k.accessKeyId} and ${k.secretAccessKey} are needed)`,
      );
    return {
      caCert,
      s3:
        accessKeyId && secretAccessKey
          ? { accessKeyId, secretAccessKey, sessionToken: text(k.sessionToken) }
          : undefined,
    };
  }
  if (provider === "azure") {
    const k = CredentialFiles.azure;
    return {
      caCert,
      azure: {
        accountKey: text(k.accountKey),
        sasToken: text(k.sasToken),
        connectionString: text(k.connectionString),
      },
    };
  }
  return { caCert, gcs: { serviceAccountJson: text(CredentialFiles.gcs.serviceAccountJson) } };
}

/** The credentials Secret's data (key → bytes), as the controller reads it. */
export function credentialsFromFiles(
  provider: Provider | undefined,
  files: Record<string, Buffer> | undefined,
): StoreCredentials {
  if (!files) return {};
  return credentialsFrom(provider ?? "s3", (name) => files[name]?.toString("utf8"));
}
