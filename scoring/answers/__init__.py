"""Files of SHS answers: CSV and XLSX read safely, the validation columns, the scored file."""
