"""Tables are no sentences (issue 34): a certificate of service's table of recipients is dropped
from PDF-born plain text, by layout."""

from statinterp.sources.cleaning import drop_tables, pdf_paragraphs

# Genuine excerpt: Tennessee Workers' Compensation Appeals Board, Ruben Diaz v. Create and Construct,
# LLC (2019), CourtListener plain_text of the opinion's PDF (the study's set, tn-wcab-diaz); public domain.
DIAZ = """                                   CERTIFICATE OF SERVICE

I hereby certify that a true and correct copy of the Appeals Board’s decision in the referenced
case was sent to the following recipients by the following methods of service on this the 13th day
of September, 2019.

 Name                              Certified   First Class   Via   Via     Sent to:
                                   Mail        Mail          Fax   Email
 Ruben Diaz                            X                                   401 Sky Gap Court
                                                                           Antioch, TN 37013
 Jonathan Pledger                                                    X     jpledger@waterfordlaw.com
 Kenneth M. Switzer, Chief Judge                                     X     Via Electronic Mail
 Penny Shrum, Clerk, Court of                                        X     penny.patterson-shrum@tn.gov
 Workers’ Compensation Claims
"""  # noqa: E501

PROSE = """The employee appealed.  The trial court found that the employee  had not shown
that the injury arose  primarily out of  the employment, and we  agree with that
finding.  We affirm  the order  and remand  the case for  any further proceedings
as may be  necessary.  Costs on  appeal are taxed  to the employee.
"""


def test_certificate_table_is_not_a_sentence():
    paras, _ = pdf_paragraphs("Some body text of the opinion.\n\n" + DIAZ)
    text = " ".join(paras)
    assert "Sky Gap Court" not in text
    assert "Certified" not in text
    assert "I hereby certify that a true and correct copy" in text
    assert "CERTIFICATE OF SERVICE" in text


def test_prose_with_double_spaces_is_kept():
    lines = PROSE.splitlines()
    assert drop_tables(lines) == lines


def test_caption_column_is_kept():
    caption = ["Ruben Diaz                ) Docket No. 2019-06-0263",
               "                          )",
               "v.                        )      State File No. 9687-2019",
               "Create and Construct, LLC )      Judge One"]
    assert drop_tables(caption) == caption


# Genuine excerpt: First Circuit No. 20-1507 (2020), CourtListener plain_text (the study's set,
# ca1-20-1507): a widely justified block quote, body text that must stay.
JUSTIFIED = """       grapple    with    the    "dynamic     and    fact-intensive"          considerations
       involved    in    mounting      an   effective      response.          S.    Bay    United
       Pentecostal      Church    v.    Newsom,     140    S.   Ct.       1613,    1613    (2020)
       (Roberts,     C.J.,       concurring).             Carefully        balancing         these"""


def test_widely_justified_block_quote_is_kept():
    lines = JUSTIFIED.splitlines()
    assert drop_tables(lines) == lines
