// Signs an aws-chunked PUT with aws-crt-java (aws-c-auth, the signer the AWS SDKs use) and writes
// the signed headers and the encoded body, so that slipstream's verifier can be checked against
// an independent implementation. Usage: CrtChunks v4|v4a trailer|plain OUT_DIR
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.crt.auth.credentials.Credentials;
import software.amazon.awssdk.crt.auth.signing.AwsSigner;
import software.amazon.awssdk.crt.auth.signing.AwsSigningConfig;
import software.amazon.awssdk.crt.auth.signing.AwsSigningConfig.AwsSignatureType;
import software.amazon.awssdk.crt.auth.signing.AwsSigningConfig.AwsSignedBodyHeaderType;
import software.amazon.awssdk.crt.auth.signing.AwsSigningConfig.AwsSigningAlgorithm;
import software.amazon.awssdk.crt.auth.signing.AwsSigningResult;
import software.amazon.awssdk.crt.http.HttpHeader;
import software.amazon.awssdk.crt.http.HttpRequest;
import software.amazon.awssdk.crt.http.HttpRequestBodyStream;

public class CrtChunks {
    /** 2013-05-24T00:00:00Z, the date of AWS's chunked-upload example. */
    static final long TIME = 1369353600000L;
    static final int LEN = 66560;
    static final int CHUNK = 65536;

    static class Body implements HttpRequestBodyStream {
        private final byte[] data;
        private int at;
        Body(byte[] data) { this.data = data; }
        @Override public boolean sendRequestBody(ByteBuffer out) {
            int n = Math.min(out.remaining(), data.length - at);
            out.put(data, at, n);
            at += n;
            return at == data.length;
        }
        @Override public boolean resetPosition() { at = 0; return true; }
        @Override public long getLength() { return data.length; }
    }

    static AwsSigningConfig config(boolean v4a) {
        AwsSigningConfig c = new AwsSigningConfig();
        c.setAlgorithm(v4a ? AwsSigningAlgorithm.SIGV4_ASYMMETRIC : AwsSigningAlgorithm.SIGV4);
        c.setRegion("us-east-1");
        c.setService("s3");
        c.setTime(TIME);
        c.setUseDoubleUriEncode(false);
        c.setShouldNormalizeUriPath(false);
        c.setCredentials(new Credentials(
            "AKIAIOSFODNN7EXAMPLE".getBytes(StandardCharsets.UTF_8),
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".getBytes(StandardCharsets.UTF_8),
            null));
        return c;
    }

    public static void main(String[] args) throws Exception {
        boolean v4a = args[0].equals("v4a");
        boolean trailer = args[1].equals("trailer");
        Path out = Path.of(args[2]);
        byte[] data = new byte[LEN];
        for (int i = 0; i < LEN; i++) data[i] = (byte) (i * 31 % 251);
        String mode = v4a
            ? (trailer ? AwsSigningConfig.AwsSignedBodyValue.STREAMING_AWS4_ECDSA_P256_SHA256_PAYLOAD_TRAILER
                       : AwsSigningConfig.AwsSignedBodyValue.STREAMING_AWS4_ECDSA_P256_SHA256_PAYLOAD)
            : (trailer ? "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
                       : AwsSigningConfig.AwsSignedBodyValue.STREAMING_AWS4_HMAC_SHA256_PAYLOAD);

        List<HttpHeader> headers = new ArrayList<>();
        headers.add(new HttpHeader("host", "s3.amazonaws.com"));
        headers.add(new HttpHeader("content-encoding", "aws-chunked"));
        headers.add(new HttpHeader("x-amz-decoded-content-length", Integer.toString(LEN)));
        if (trailer) headers.add(new HttpHeader("x-amz-trailer", "x-amz-checksum-crc32c"));
        HttpRequest request = new HttpRequest("PUT", "/examplebucket/chunkObject.txt",
            headers.toArray(new HttpHeader[0]), null);
        AwsSigningConfig c = config(v4a);
        c.setSignatureType(AwsSignatureType.HTTP_REQUEST_VIA_HEADERS);
        c.setSignedBodyValue(mode);
        c.setSignedBodyHeader(AwsSignedBodyHeaderType.X_AMZ_CONTENT_SHA256);
        AwsSigningResult signed = AwsSigner.sign(request, c).get();
        byte[] previous = signed.getSignature();

        AwsSigningConfig cc = config(v4a);
        cc.setSignatureType(AwsSignatureType.HTTP_REQUEST_CHUNK);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (int at = 0; ; at += CHUNK) {
            int n = Math.max(0, Math.min(CHUNK, LEN - at));
            byte[] piece = new byte[n];
            System.arraycopy(data, Math.min(at, LEN), piece, 0, n);
            previous = AwsSigner.signChunk(new Body(piece), previous, cc).get();
            String sig = new String(previous, StandardCharsets.UTF_8);
            body.write((Integer.toHexString(n) + ";chunk-signature=" + sig + "\r\n").getBytes(StandardCharsets.UTF_8));
            body.write(piece);
            if (n == 0) break;
            body.write("\r\n".getBytes(StandardCharsets.UTF_8));
        }
        if (trailer) {
            AwsSigningConfig tc = config(v4a);
            tc.setSignatureType(AwsSignatureType.HTTP_REQUEST_TRAILING_HEADERS);
            List<HttpHeader> trailers = List.of(new HttpHeader("x-amz-checksum-crc32c", "sOO8/Q=="));
            byte[] tsig = AwsSigner.sign(trailers, previous, tc).get().getSignature();
            body.write(("x-amz-checksum-crc32c:sOO8/Q==\r\nx-amz-trailer-signature:"
                + new String(tsig, StandardCharsets.UTF_8) + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
        } else {
            body.write("\r\n".getBytes(StandardCharsets.UTF_8));
        }

        StringBuilder lines = new StringBuilder();
        for (HttpHeader h : signed.getSignedRequest().getHeaders()) {
            lines.append(h.getName()).append(": ").append(h.getValue()).append('\n');
        }
        Files.createDirectories(out);
        Files.writeString(out.resolve("headers.txt"), lines.toString());
        Files.write(out.resolve("body.bin"), body.toByteArray());
    }
}
