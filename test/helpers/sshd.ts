// A private OpenSSH server for the SFTP source's tests: Debian's sshd on a free port, with throwaway host and user keys
// in a temporary folder, the internal sftp subsystem, and root allowed to log in with the key (or a password when one
// is set for a user of this machine: the tests use keys only).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../global-setup.ts';

export const SSHD = '/usr/sbin/sshd';

export interface OwnSshd {
  port: number;
  user: string;
  /** The user's private key (OpenSSH format text). */
  userKey: string;
  /** The host key's fingerprint as `ssh-keygen -lf` prints it. */
  hostFingerprint: string;
  /** Another key pair's fingerprint: a pin that does not match. */
  otherFingerprint: string;
  stop(): Promise<void>;
}

const keygen = (file: string): void => {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'throwaway', '-f', file], { stdio: 'ignore' });
};
const fingerprint = (file: string): string =>
  execFileSync('ssh-keygen', ['-lf', file], { encoding: 'utf8' }).split(' ')[1]!;

/** Why sshd cannot run here, or null (the test file skips with that reason when the binary is missing). */
export function sshdMissing(): string | null {
  if (!existsSync(SSHD)) return `${SSHD} missing (apt-get install openssh-server; .ci/run installs it)`;
  try {
    execFileSync('ssh-keygen', ['-?'], { stdio: 'ignore' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'ssh-keygen missing';
  }
  return null;
}

/** Starts sshd in `dir` (absolute) on a free port; resolves once it accepts connections. */
export async function ownSshd(dir: string): Promise<OwnSshd> {
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // privilege separation directory
  const hostKey = join(dir, 'host_ed25519');
  const userKey = join(dir, 'user_ed25519');
  const otherKey = join(dir, 'other_ed25519');
  keygen(hostKey);
  keygen(userKey);
  keygen(otherKey);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${userKey}.pub`));
  const port = await freePort();
  const user = userInfo().username;
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'StrictModes no',
      'UsePAM no',
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'Subsystem sftp internal-sftp',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`sshd exited: ${stderr}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = createConnection(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (i > 100) throw new Error(`sshd did not listen: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    user,
    userKey: readFileSync(userKey, 'utf8'),
    hostFingerprint: fingerprint(`${hostKey}.pub`),
    otherFingerprint: fingerprint(`${otherKey}.pub`),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
