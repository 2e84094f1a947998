// Asks aws-crt-java (aws-c-auth) whether SigV4A signatures made by slipstream are valid.
// Reads lines from stdin: FORM \t METHOD \t PATH?QUERY \t HOST \t PAYLOAD \t CANONICAL_REQUEST_HEX
// \t SIGNATURE \t PUBLIC_X \t PUBLIC_Y, where FORM is "header" or "query" and the path and query are
// as sent, without the signing parameters. aws-c-auth rebuilds the canonical request itself,
// compares it with ours, and checks our ECDSA signature over its own string to sign.
// Prints "true" or "false" per line (aws-c-auth's refusals arrive as exceptions: "false").
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import software.amazon.awssdk.crt.CrtRuntimeException;
import software.amazon.awssdk.crt.auth.credentials.Credentials;
import software.amazon.awssdk.crt.auth.signing.AwsSigningConfig;
import software.amazon.awssdk.crt.auth.signing.AwsSigningConfig.AwsSignatureType;
import software.amazon.awssdk.crt.auth.signing.AwsSigningConfig.AwsSignedBodyHeaderType;
import software.amazon.awssdk.crt.auth.signing.AwsSigningConfig.AwsSigningAlgorithm;
import software.amazon.awssdk.crt.auth.signing.AwsSigningUtils;
import software.amazon.awssdk.crt.http.HttpHeader;
import software.amazon.awssdk.crt.http.HttpRequest;

public class CrtVerify {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder results = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split("\t", -1);
            boolean query = f[0].equals("query");
            AwsSigningConfig c = new AwsSigningConfig();
            c.setAlgorithm(AwsSigningAlgorithm.SIGV4_ASYMMETRIC);
            c.setSignatureType(query ? AwsSignatureType.HTTP_REQUEST_VIA_QUERY_PARAMS
                                     : AwsSignatureType.HTTP_REQUEST_VIA_HEADERS);
            c.setRegion("us-east-1");
            c.setService("s3");
            c.setTime(1369353600000L);
            c.setUseDoubleUriEncode(false);
            c.setShouldNormalizeUriPath(false);
            c.setSignedBodyValue(f[4]);
            c.setSignedBodyHeader(query ? AwsSignedBodyHeaderType.NONE
                                        : AwsSignedBodyHeaderType.X_AMZ_CONTENT_SHA256);
            if (query) c.setExpirationInSeconds(3600);
            c.setCredentials(new Credentials(
                "AKIAIOSFODNN7EXAMPLE".getBytes(StandardCharsets.UTF_8),
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".getBytes(StandardCharsets.UTF_8),
                null));
            HttpRequest request = new HttpRequest(f[1], f[2],
                new HttpHeader[] {new HttpHeader("host", f[3])}, null);
            String canonical = new String(HexFormat.of().parseHex(f[5]), StandardCharsets.UTF_8);
            boolean ok;
            try {
                ok = AwsSigningUtils.verifySigv4aEcdsaSignature(
                    request, canonical, c, f[6].getBytes(StandardCharsets.UTF_8), f[7], f[8]);
            } catch (CrtRuntimeException e) {
                // aws-c-auth reports a refused signature or canonical request as an error.
                ok = false;
            }
            results.append(ok).append('\n');
        }
        System.out.print(results);
    }
}
