/*
 * MinaSftpd: Apache MINA SSHD's server with its SFTP subsystem on
 * 127.0.0.1:PORT, for regress/t-zoo.sh.  Public keys only (those in
 * AUTHORIZED_KEYS), the host key kept in HOSTKEY; the local file system
 * served as it is.  Prints "ready" once it listens; runs until killed.
 *
 * usage: java -cp ... regress.MinaSftpd PORT HOSTKEY AUTHORIZED_KEYS
 */
package regress;

import java.nio.file.Paths;
import java.util.Collections;

import org.apache.sshd.server.SshServer;
import org.apache.sshd.server.config.keys.AuthorizedKeysAuthenticator;
import org.apache.sshd.server.keyprovider.SimpleGeneratorHostKeyProvider;
import org.apache.sshd.sftp.server.SftpSubsystemFactory;

public final class MinaSftpd {
	private MinaSftpd() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length != 3) {
			System.err.println("usage: MinaSftpd PORT HOSTKEY "
			    + "AUTHORIZED_KEYS");
			System.exit(2);
		}
		SshServer sshd = SshServer.setUpDefaultServer();
		sshd.setHost("127.0.0.1");
		sshd.setPort(Integer.parseInt(args[0]));
		sshd.setKeyPairProvider(
		    new SimpleGeneratorHostKeyProvider(Paths.get(args[1])));
		sshd.setPublickeyAuthenticator(
		    new AuthorizedKeysAuthenticator(Paths.get(args[2])));
		sshd.setPasswordAuthenticator(null);
		sshd.setKeyboardInteractiveAuthenticator(null);
		sshd.setSubsystemFactories(Collections.singletonList(
		    new SftpSubsystemFactory()));
		sshd.start();
		System.out.println("ready");
		System.out.flush();
		Thread.currentThread().join();
	}
}
