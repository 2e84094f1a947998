//! `--grants`, as the AWS CLI takes it: `PERMISSION=GRANTEE` (`read`, `readacl`, `writeacl` or
//! `full`; the grantee as S3 takes it, `uri=...`, `id=...` or `emailaddress=...`, several
//! comma-separated), each sent as its `x-amz-grant-*` header with the objects written.

use slipstream_transfer::Grants;

/// One `--grants` value: which header, and the grantees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    permission: &'static str,
    grantees: String,
}

/// A `--grants` value, refused as the AWS CLI refuses it when the permission is unknown or the
/// `=` is missing.
pub fn parse_grant(text: &str) -> Result<Grant, String> {
    let (permission, grantees) = text
        .split_once('=')
        .ok_or("grants should be of the form permission=principal")?;
    let permission = match permission {
        "read" => "read",
        "readacl" => "readacl",
        "writeacl" => "writeacl",
        "full" => "full",
        _ => return Err("permission must be one of: read|readacl|writeacl|full".into()),
    };
    if grantees.is_empty() {
        return Err(format!("{permission}= names no grantee"));
    }
    Ok(Grant {
        permission,
        grantees: grantees.to_owned(),
    })
}

/// The grants of an object, from the flag's values; a permission given twice is refused (the
/// AWS CLI keeps the last and drops the first's grantees without a word): its grantees go in
/// one value, comma-separated.
pub fn grants(given: &[Grant]) -> Result<Grants, String> {
    let mut out = Grants::default();
    for g in given {
        let slot = match g.permission {
            "read" => &mut out.read,
            "readacl" => &mut out.read_acp,
            "writeacl" => &mut out.write_acp,
            _ => &mut out.full_control,
        };
        if slot.is_some() {
            return Err(format!(
                "--grants names {} twice: list its grantees in one value, {}=id=A,id=B",
                g.permission, g.permission
            ));
        }
        *slot = Some(g.grantees.clone());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_read_as_the_aws_cli_reads_them() {
        let all = [
            "read=uri=http://acs.amazonaws.com/groups/global/AllUsers",
            "full=id=a,id=b",
        ]
        .map(|t| parse_grant(t).unwrap());
        assert_eq!(
            grants(&all).unwrap(),
            Grants {
                read: Some("uri=http://acs.amazonaws.com/groups/global/AllUsers".into()),
                full_control: Some("id=a,id=b".into()),
                ..Grants::default()
            }
        );
        assert!(parse_grant("write=id=a")
            .unwrap_err()
            .contains("read|readacl|writeacl|full"));
        assert!(parse_grant("read")
            .unwrap_err()
            .contains("permission=principal"));
        assert!(parse_grant("read=").is_err());
        let twice = ["read=id=a", "read=id=b"].map(|t| parse_grant(t).unwrap());
        assert!(grants(&twice).unwrap_err().contains("twice"));
    }
}
